// Node's RegExp with the `u` flag, the reference ECMA-262 engine of tests/runtime/test_ecma_regex.py:
// stdin is a JSON array of {pattern, samples}; stdout one {valid, error, matches} per entry.
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = cases.map(({ pattern, samples }) => {
    let re;
    try {
      re = new RegExp(pattern, "u");
    } catch (e) {
      return { valid: false, error: String(e.message), matches: [] };
    }
    return { valid: true, error: null, matches: samples.map((s) => re.test(s)) };
  });
  process.stdout.write(JSON.stringify({ unicode: process.versions.unicode, node: process.version, results: out }));
});
