// The plotly.js the pages load: core (scatter) plus the other trace types the figures use,
// bar (dashboard/charts_evidence.py: wait events, percentiles) and icicle (flame graphs).
// No published partial bundle has icicle, and the full one is four times the size.
var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/icicle")]);

module.exports = Plotly;
