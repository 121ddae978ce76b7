"""`/openapi.json` from the route table and the JSON Schema of the msgspec body types (OpenAPI 3.1).

Generated, never hand-written: a route that exists is documented and a documented path exists.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .routing import RouteSpec
from .schemas import ErrorBody

REF = "#/components/schemas/{name}"
_PARAM = re.compile(r"{([^}]+)}")
_CONVERTER = re.compile(r"{([^}:]+):[^}]+}")


def build(routes: list[RouteSpec], *, title: str, version: str) -> dict[str, Any]:
    types: list[Any] = [ErrorBody]
    for spec in routes:
        types += [t for t in (spec.body, spec.response, spec.stream) if t is not None and t not in types]
    schemas, components = msgspec.json.schema_components(types, ref_template=REF)
    schema_of = dict(zip(map(id, types), schemas, strict=True))
    error = {
        "description": "A structured error",
        "content": {"application/json": {"schema": schema_of[id(ErrorBody)]}},
    }
    paths: dict[str, dict[str, Any]] = {}
    for spec in routes:
        path = _CONVERTER.sub(r"{\1}", spec.path)  # starlette's `{path:path}` is OpenAPI's `{path}`
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PARAM.findall(path)
        ]
        parameters += [
            {
                "name": q.name,
                "in": "query",
                "required": False,
                "description": q.description,
                "schema": q.schema,
            }
            for q in spec.query
        ]
        content: dict[str, Any] = {}
        if spec.response is not None:
            content["application/json"] = {"schema": schema_of[id(spec.response)]}
        if spec.stream is not None:
            content["text/event-stream"] = {
                "schema": {"type": "string", "description": "server-sent events"},
                "x-event-data": schema_of[id(spec.stream)],
            }
        operation: dict[str, Any] = {
            "operationId": spec.endpoint.__name__,
            "summary": spec.summary,
            "tags": [spec.tag],
            "responses": {
                str(spec.status): {"description": "Success", **({"content": content} if content else {})},
                "4XX": error,
                "5XX": error,
            },
        }
        if parameters:
            operation["parameters"] = parameters
        if spec.body is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": schema_of[id(spec.body)]}},
            }
        if spec.open:
            operation["security"] = []
        paths.setdefault(path, {})[spec.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": version,
            "description": "MRP-VM kernel daemon: an OpenAI-compatible chat endpoint, the DS013 "
            "session, KB, plugin, settings and explainability API, and the web app at /.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
