"""HTML pages. Views get data from selectors and render templates; no logic of their own."""
