// compare.mjs SET RESULTS LOG BASELINE FAILURES_OUT
//
// Reads one run of the MCP conformance suite (`server --requirements SET -o RESULTS`, its
// output in LOG), compares its failing checks with BASELINE and prints a short summary.
// Exit 0 when every failing check is in the baseline, 1 when one is not, 2 when the run
// itself cannot be read. Writes every failing check, with its message, to FAILURES_OUT.
//
// A baseline line is `SCENARIO CHECK REASON...`: CHECK is a check id, or * for every check
// of the scenario; the reason is required. Blank lines and lines starting with # are
// ignored. A check counts as failing when its status is FAILURE (the suite's own count);
// WARNING, INFO and SKIPPED do not fail. A scenario that crashed before writing its
// checks counts as one failing check named scenario-error.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [set, resultsDir, logPath, baselinePath, failuresOut] = process.argv.slice(2);
if (!failuresOut) {
  console.error("usage: compare.mjs SET RESULTS LOG BASELINE FAILURES_OUT");
  process.exit(2);
}
const broken = (msg) => {
  console.error(`conformance ${set}: ${msg}`);
  process.exit(2);
};
const oneLine = (s, max = 200) => {
  const t = String(s ?? "").replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
};

// The suite's summary: one line per scenario, then the total and what is not scored.
const log = readFileSync(logPath, "utf8");
const scenarios = [...log.matchAll(/^[✓✗] (\S+): \d+ passed, \d+ failed/gmu)].map((m) => m[1]);
const total = log.match(/^Total: (\d+) passed, (\d+) failed/mu);
if (scenarios.length === 0 || !total) broken(`the suite printed no results (see ${logPath})`);
const notScored = new Map(
  [...log.matchAll(/^ {2}[✓✗] (\S+) \(([a-z-]+)\)$/gmu)].map((m) => [m[1], m[2]]),
);

// Each scenario's checks, from server-<scenario>-<timestamp>/checks.json.
const dirs = existsSync(resultsDir) ? readdirSync(resultsDir) : [];
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const checks = [];
for (const scenario of scenarios) {
  const re = new RegExp(`^server-${escape(scenario)}-\\d{4}-\\d{2}-\\d{2}T`);
  const dir = dirs.find((d) => re.test(d));
  const file = dir && join(resultsDir, dir, "checks.json");
  if (!file || !existsSync(file)) {
    const crash = log.match(new RegExp(`^Failed to run scenario ${escape(scenario)}: (.*)$`, "m"));
    checks.push({ scenario, id: "scenario-error", status: "FAILURE", message: crash?.[1] ?? "no checks written" });
    continue;
  }
  for (const c of JSON.parse(readFileSync(file, "utf8"))) {
    checks.push({ scenario, id: c.id, status: c.status, message: c.errorMessage ?? c.description });
  }
}

// The baseline.
const baseline = [];
readFileSync(baselinePath, "utf8")
  .split("\n")
  .forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const [scenario, check, ...reason] = line.split(/\s+/);
    if (!check || reason.length === 0) broken(`${baselinePath}:${i + 1}: want "SCENARIO CHECK REASON"`);
    baseline.push({ scenario, check, reason: reason.join(" "), line: i + 1, used: false });
  });
const expectedBy = (c) =>
  baseline.find((b) => b.scenario === c.scenario && (b.check === "*" || b.check === c.id));

const passed = checks.filter((c) => c.status === "SUCCESS").length;
const failing = checks.filter((c) => c.status === "FAILURE");
const warnings = checks.filter((c) => c.status === "WARNING").length;
const unexpected = [];
let expected = 0;
for (const c of failing) {
  const b = expectedBy(c);
  if (b) {
    b.used = true;
    expected++;
  } else {
    unexpected.push(c);
  }
}
const stale = baseline.filter((b) => !b.used);

// Every failing check, grouped by scenario, for whoever works on the next failure.
const lines = [`# conformance ${set}: every failing check (scenario, check, message)`];
for (const c of failing) {
  const tag = expectedBy(c) ? "expected" : "NEW";
  const ns = notScored.has(c.scenario) ? ` [not scored: ${notScored.get(c.scenario)}]` : "";
  lines.push(`${tag}\t${c.scenario}${ns}\t${c.id}\t${oneLine(c.message, 400)}`);
}
writeFileSync(failuresOut, lines.join("\n") + "\n");

const suiteTotal = `${total[1]} passed, ${total[2]} failed`;
const ours = `${passed} passed, ${failing.length} failed`;
console.log(
  `conformance ${set}: ${ours}, ${warnings} warnings in ${scenarios.length} scenarios; ` +
    `failed: ${expected} expected (baseline), ${unexpected.length} unexpected` +
    (suiteTotal === ours ? "" : ` [the suite counted ${suiteTotal}]`),
);
const shown = 20;
for (const c of unexpected.slice(0, shown)) {
  console.log(`  NEW  ${c.scenario} ${c.id}: ${oneLine(c.message, 160)}`);
}
if (unexpected.length > shown) {
  console.log(`  ... and ${unexpected.length - shown} more NEW failures: ${failuresOut} lists them all`);
}
for (const b of stale) {
  console.log(`  no longer failing (remove ${baselinePath}:${b.line} if it stays so): ${b.scenario} ${b.check}`);
}
process.exit(unexpected.length > 0 ? 1 : 0);
