#!/usr/bin/env node
// gs-keyword-node: an MRP-VM gs-plugin in plain Node.js (protocol v1, one-shot mode, no dependencies).
//
// stdin: one JSON request (DS016: {"prompt", "context"} plus optional envelope fields); EOF.
// stdout: CNL Markdown (## Plugin Result, ## Answer, ## Sources).
// stderr on failure: one line of JSON {"code","message","details"}.
// Exit codes: 0 success, 1 processing error, 2 invalid input, 3 internal timeout.
"use strict";

const fs = require("fs");
const path = require("path");

const PLUGIN_ID = JSON.parse(fs.readFileSync(path.join(__dirname, "manifest.json"), "utf8")).id;
const NO_CONTEXT_ANSWER =
  "The session context and persistent KB do not contain enough evidence to answer this intent.";
const OPS = [
  "detectSeeds", "normalizePersistentContext", "buildPlan", "recordOutcome",
  "retrieve", "onSourceText", "onSessionEvent", "solve", "validate",
];
const MAX_SENTENCES = 3;

class InvalidInput extends Error {
  constructor(code, message, details) {
    super(message);
    this.code = code;
    this.details = details || {};
  }
}

function fail(exitCode, code, message, details) {
  process.stderr.write(JSON.stringify({ code, message, details: details || {} }) + "\n");
  process.exitCode = exitCode;
}

// ------------------------------------------------------------------ request validation

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v) => typeof v === "number" && Number.isInteger(v);

function expect(ok, where, what) {
  if (!ok) throw new InvalidInput("SCHEMA_VIOLATION", `request: expected ${what} at ${where}`, { at: where });
}

function optional(obj, key, check, what, prefix = "$") {
  if (obj[key] !== undefined) expect(check(obj[key]), `${prefix}.${key}`, what);
}

function validateRequest(req) {
  expect(isObject(req), "$", "an object");
  expect(typeof req.prompt === "string", "$.prompt", "a string (required)");
  expect(Array.isArray(req.context), "$.context", "an array (required)");
  req.context.forEach((item, i) => {
    expect(isObject(item), `$.context[${i}]`, "an object");
    for (const key of ["title", "sourceLink", "text"]) {
      if (item[key] !== undefined) expect(typeof item[key] === "string", `$.context[${i}].${key}`, "a string");
    }
  });
  optional(req, "protocolVersion", (v) => v === 1, "1");
  optional(req, "op", (v) => v === null || OPS.includes(v), `one of ${OPS.join(", ")}`);
  optional(req, "payload", (v) => v === null || isObject(v), "an object");
  optional(req, "budget", isObject, "an object");
  if (isObject(req.budget)) {
    optional(req.budget, "llmCalls", isInt, "an integer", "$.budget");
    optional(req.budget, "deadlineMs", isInt, "an integer", "$.budget");
  }
  optional(req, "llm", (v) => v === null || (isObject(v) && typeof v.baseUrl === "string" && typeof v.apiKey === "string"),
    "null or {baseUrl, apiKey}");
  optional(req, "paths", isObject, "an object");
  for (const key of ["requestId", "frameId", "sessionId"]) optional(req, key, (v) => typeof v === "string", "a string");
  optional(req, "id", (v) => v === null || typeof v === "string" || isInt(v), "a string, an integer or null");
  const op = req.op || "solve";
  if (op === "solve" && isObject(req.payload)) validateSolvePayload(req.payload);
  return op;
}

function validateSolvePayload(p) {
  const at = (k) => `$.payload.${k}`;
  if (p.intent !== undefined) expect(p.intent === null || isObject(p.intent), at("intent"), "an object or null");
  if (p.resolved !== undefined) expect(p.resolved === null || isObject(p.resolved), at("resolved"), "an object or null");
  for (const key of ["evidence", "guidance"]) {
    if (p[key] !== undefined) {
      expect(Array.isArray(p[key]), at(key), "an array of units");
      p[key].forEach((u, i) => expect(isObject(u), `${at(key)}[${i}]`, "a unit object"));
    }
  }
  if (p.allowDecompose !== undefined) expect(typeof p.allowDecompose === "boolean", at("allowDecompose"), "a boolean");
}

// ------------------------------------------------------------------ text

const STOPWORDS = new Set(`a about above after again against all am an and any are as at be because been before
being below between both but by can cannot could did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself me more most my no nor not of off on once
only or other our ours out over own same she should so some such than that the their theirs them then there these
they this those through to too under until up very was we were what when where which while who whom why will with
would you your yours whose also just may might must shall one get got us use used using`.split(/\s+/));

function stem(word) {
  // A light suffix stripper: enough to match "builds"/"building"/"built" style variants of one word.
  for (const [suffix, repl] of [["ies", "y"], ["ing", ""], ["ed", ""], ["es", ""], ["s", ""], ["ly", ""]]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3 && !word.endsWith("ss")) {
      return word.slice(0, word.length - suffix.length) + repl;
    }
  }
  return word;
}

// Content words of a text as [stem, surface word] pairs.
function words(text) {
  const out = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu)) {
    const w = match[0].replace(/'s$/, "");
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    out.push([stem(w), w]);
  }
  return out;
}

const terms = (text) => words(text).map(([t]) => t);

function sentences(text) {
  const out = [];
  for (const raw of text.split(/\n+/)) {
    // Headings and list markers go first, so "1. Stop the build." stays one sentence.
    const line = raw.replace(/^\s*#+\s*/, "").replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "");
    for (const part of line.split(/(?<=[.!?])\s+(?=["'(\[]?[A-Z0-9])/)) {
      const sentence = part.trim();
      if (/[\p{L}\p{N}]/u.test(sentence)) out.push(sentence);
    }
  }
  return out;
}

// The readable body of a context item: its Claim/Procedure fields when it is a flattened KU, else all of it.
function itemBody(text) {
  const fields = {};
  let last = null;
  const loose = [];
  for (const line of text.split("\n")) {
    const m = /^(Role|Topic|Claim|Procedure|Condition|Title):\s*(.*)$/.exec(line);
    if (m) {
      last = m[1];
      fields[last] = m[2];
    } else if (last && /^\s{2,}\S/.test(line)) {
      fields[last] += "\n" + line.trim();
    } else {
      last = null;
      if (line.trim()) loose.push(line.trim());
    }
  }
  const body = [fields.Claim, fields.Procedure, ...loose].filter(Boolean).join("\n");
  return { body: body || text, topic: fields.Topic || "", role: fields.Role || "" };
}

function sourceId(item, index) {
  const id = (item.title || item.sourceLink || `context-${index + 1}`).replace(/[,\s]+/g, "_");
  return id;
}

// ------------------------------------------------------------------ solve

function solve(req) {
  const surface = new Map(words(req.prompt).reverse());
  const query = new Set(surface.keys());
  let items = req.context;
  const evidence = isObject(req.payload) && Array.isArray(req.payload.evidence) ? req.payload.evidence : [];
  if (items.length === 0 && evidence.length > 0) {
    items = evidence.map((u) => ({ title: String(u.id || ""), text: String(u.claim || u.procedure || "") }));
  }
  const candidates = [];
  items.forEach((item, i) => {
    const { body, topic, role } = itemBody(item.text || "");
    const topicTerms = new Set(terms(topic).filter((t) => query.has(t)));
    sentences(body).forEach((sentence, j) => {
      // A sentence matches through its own words and its item's topic (a procedure step rarely names its goal).
      const own = [...new Set(terms(sentence))].filter((t) => query.has(t));
      const hits = [...new Set([...own, ...topicTerms])];
      if (hits.length > 0) {
        candidates.push({ sentence, hits, own: own.length, role, item: i, order: j, source: sourceId(item, i) });
      }
    });
  });
  if (query.size === 0 || candidates.length === 0) return noContext(req, items.length);

  candidates.sort((a, b) => b.hits.length - a.hits.length || b.own - a.own || a.item - b.item || a.order - b.order);
  const best = candidates[0].hits.length;
  const floor = Math.max(1, Math.ceil(best * 0.6));
  const seen = new Set();
  const chosen = [];
  for (const c of candidates) {
    if (c.hits.length < floor || chosen.length >= MAX_SENTENCES) break;
    const key = c.sentence.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    chosen.push(c);
  }
  chosen.sort((a, b) => a.item - b.item || a.order - b.order);

  const coverage = best / query.size;
  const confidence = coverage >= 0.6 ? "high" : coverage >= 0.3 ? "medium" : "low";
  const sources = [...new Set(chosen.map((c) => c.source))];
  const matched = [...new Set(chosen.flatMap((c) => c.hits))].slice(0, 8).map((t) => surface.get(t));
  const steps = chosen.length > 1 && chosen.every((c) => c.item === chosen[0].item && c.role === "Procedure");
  const answer =
    chosen.length === 1
      ? chosen[0].sentence
      : chosen.map((c, k) => (steps ? `${k + 1}. ${c.sentence}` : `- ${c.sentence}`)).join("\n");
  return render({
    status: "success",
    confidence,
    result: `${chosen.length} sentence(s) selected from ${items.length} context item(s)`,
    evidence: `best sentence shares ${best} of ${query.size} prompt terms (${matched.join(", ")})`,
    request: req.id,
    answer,
    sources,
  });
}

function noContext(req, count) {
  return render({
    status: "no-context",
    confidence: "low",
    result: "no context sentence shares a content word with the prompt",
    evidence: `${count} context item(s) checked`,
    request: req.id,
    answer: NO_CONTEXT_ANSWER,
    sources: [],
  });
}

const oneLine = (s) => String(s).replace(/\s+/g, " ").trim();

function render(doc) {
  const out = ["## Plugin Result", `Status: ${doc.status}`, `Plugin: ${PLUGIN_ID}`];
  if (doc.confidence) out.push(`Confidence: ${doc.confidence}`);
  out.push(`Result: ${oneLine(doc.result)}`);
  if (doc.evidence) out.push(`Evidence: ${oneLine(doc.evidence)}`);
  out.push("LLMCalls: 0");
  if (doc.request !== undefined && doc.request !== null) out.push(`Request: ${oneLine(doc.request)}`);
  out.push("");
  if (doc.answer !== undefined) out.push("## Answer", doc.answer, "");
  if (doc.sources !== undefined) out.push("## Sources", `Used: ${doc.sources.join(", ")}`.trimEnd(), "");
  return out.join("\n");
}

function unsupported(req, op) {
  return render({ status: "unsupported", result: `${PLUGIN_ID} does not implement ${op}`, request: req.id });
}

// ------------------------------------------------------------------ main

function main() {
  let req;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(fs.readFileSync(0));
    try {
      req = JSON.parse(text);
    } catch (err) {
      throw new InvalidInput("INVALID_JSON", `request is not valid JSON: ${err.message}`);
    }
    const op = validateRequest(req);
    process.stdout.write(op === "solve" ? solve(req) : unsupported(req, op));
  } catch (err) {
    if (err instanceof InvalidInput) return fail(2, err.code, err.message, err.details);
    if (err instanceof TypeError && err.code === "ERR_ENCODING_INVALID_ENCODED_DATA") {
      return fail(2, "INVALID_JSON", "request is not valid UTF-8");
    }
    return fail(1, "INTERNAL_ERROR", `${err.name}: ${err.message}`);
  }
}

main();
