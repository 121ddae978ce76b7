"""Reading JSON bodies into msgspec Structs and writing JSON responses."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from .errors import ApiError, from_decode_error
from .schemas import encode

T = TypeVar("T")
_decoders: dict[type, msgspec.json.Decoder] = {}


async def read_json(request: Request, kind: type[T], *, optional: bool = False) -> T:
    """Decode the body as `kind`: 400 MALFORMED_JSON (not JSON, or not UTF-8) / EMPTY_BODY, 422
    VALIDATION_ERROR naming the field.

    `optional`: an empty body means `kind()` (every field defaulted).
    """
    body = await request.body()
    if not body.strip():
        if optional:
            return kind()
        raise ApiError(400, "EMPTY_BODY", "this request needs a JSON body")
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    try:
        body.decode("utf-8")  # every byte, not only those of the fields msgspec decodes
    except UnicodeDecodeError as err:
        raise ApiError(
            400,
            "MALFORMED_JSON",
            f"the request body is not valid UTF-8 (byte {err.start}: {err.reason})",
            {"position": err.start},
        ) from None
    try:
        return decoder.decode(body)
    except msgspec.DecodeError as err:
        raise from_decode_error(err) from None
    except RecursionError:  # the decoder's depth guard (a body of thousands of nested arrays)
        raise ApiError(400, "MALFORMED_JSON", "the request body is nested too deeply") from None


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(encode(value), status_code=status, media_type="application/json", headers=headers)


def pick(body: Any, *names: str, default: str | None = None) -> str:
    """The value of the one field of `names` (aliases: ours first, then upstream's) the body gives.

    Two different values, or none without a `default`, or an empty value: 422 VALIDATION_ERROR naming
    the field."""
    given = [(n, getattr(body, n)) for n in names if getattr(body, n) is not None]
    if len({v for _, v in given}) > 1:
        raise ApiError(
            422,
            "VALIDATION_ERROR",
            f"{' and '.join(n for n, _ in given)} are aliases: give one of them",
            {"field": given[1][0]},
        )
    if not given:
        if default is not None:
            return default
        raise ApiError(
            422,
            "VALIDATION_ERROR",
            f"Object missing required field `{names[0]}` (or its alias {', '.join(names[1:])})",
            {"field": names[0]},
        )
    name, value = given[0]
    if not value.strip():
        raise ApiError(422, "VALIDATION_ERROR", f"{name}: must not be empty", {"field": name})
    return value
