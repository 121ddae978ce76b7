// A gs-plugin that follows DS016 to the letter and nothing more: it validates what it reads (prompt,
// context, op, protocolVersion) and ignores payload, budget, llm, paths and ids, which it never reads.
"use strict";
const OPS = ["detectSeeds", "normalizePersistentContext", "buildPlan", "recordOutcome", "retrieve",
  "onSourceText", "onSessionEvent", "solve", "validate"];

function refuse(code, message) {
  process.stderr.write("reading the request failed\n"); // a log line before the error line is fine
  process.stderr.write(JSON.stringify({ code, message }) + "\n");
  process.exit(2);
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  let req;
  try { req = JSON.parse(input); } catch (e) { refuse("INVALID_JSON", "request is not JSON: " + e.message); }
  if (req === null || typeof req !== "object" || Array.isArray(req)) refuse("SCHEMA_VIOLATION", "request is not an object");
  if (typeof req.prompt !== "string") refuse("SCHEMA_VIOLATION", "prompt must be a string");
  if (!Array.isArray(req.context)) refuse("SCHEMA_VIOLATION", "context must be an array");
  for (const item of req.context) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) refuse("SCHEMA_VIOLATION", "context items are objects");
    for (const key of ["title", "sourceLink", "text"]) {
      if (key in item && typeof item[key] !== "string") refuse("SCHEMA_VIOLATION", `context item ${key} must be a string`);
    }
  }
  if ("protocolVersion" in req && req.protocolVersion !== 1) refuse("SCHEMA_VIOLATION", "protocolVersion must be 1");
  const op = req.op == null ? "solve" : req.op;
  if (!OPS.includes(op)) refuse("SCHEMA_VIOLATION", "unknown op " + op);
  const head = ["## Plugin Result", "Plugin: ds016-node", "LLMCalls: 0"];
  if (op !== "solve") {
    process.stdout.write([head[0], "Status: unsupported", ...head.slice(1)].join("\n") + "\n");
    return;
  }
  const titles = req.context.map((c) => c.title || "").filter(Boolean);
  process.stdout.write([head[0], "Status: success", "Confidence: low", ...head.slice(1),
    "", "## Answer", "You asked: " + req.prompt, "", "## Sources", "Used: " + titles.join(", ")].join("\n") + "\n");
});
