// Builds frontend/static/vendor/plotly/ from index.js: plotly.min.js (core, bar, icicle) and
// plotly.css (the rules plotly.js would otherwise inject in a <style> element, which the
// Content-Security-Policy refuses; base.html links it with class "no-inline-styles").
// Run with `npm ci && npm run build` here; SHA256SUMS records what was built.
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const out = "../static/vendor/plotly";
const version = JSON.parse(readFileSync("node_modules/plotly.js/package.json")).version;

await build({
  entryPoints: ["index.js"],
  outfile: `${out}/plotly.min.js`,
  bundle: true,
  minify: true,
  format: "iife",
  globalName: "Plotly",
  target: "es2016",
  // as plotly.js's own esbuild-config.js does
  define: { global: "window", "define.amd": "false" },
  // maplibre's CSS, required only when a map trace registers (none here)
  loader: { ".css": "empty" },
  legalComments: "eof",
  banner: { js: `/*! plotly.js v${version} (core, bar, icicle) | Copyright 2012-2026, Plotly, Inc. | MIT license */` },
});
copyFileSync("node_modules/plotly.js/dist/plotly.css", `${out}/plotly.css`);

const sums = ["plotly.min.js", "plotly.css"].map((name) => {
  const digest = createHash("sha256").update(readFileSync(`${out}/${name}`)).digest("hex");
  return `${digest}  ${name}\n`;
});
writeFileSync("SHA256SUMS", sums.join(""));
