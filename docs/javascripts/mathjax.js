// MathJax configuration for pymdownx.arithmatex (generic mode): \( \) inline, \[ \] display.
window.MathJax = {
  // $...$ and $$...$$ too: the executed notebooks (mkdocs-jupyter) keep their Markdown cells' math as written;
  // only arithmatex spans and the notebooks' rendered Markdown are processed, so a $ elsewhere stays text
  tex: { inlineMath: [["\\(", "\\)"], ["$", "$"]], displayMath: [["\\[", "\\]"], ["$$", "$$"]],
         processEscapes: true, processEnvironments: true },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex|jp-RenderedMarkdown|jp-MarkdownOutput" }
};
document$.subscribe(() => {
  if (window.MathJax && MathJax.typesetPromise) { MathJax.startup.output.clearCache(); MathJax.typesetClear(); MathJax.texReset(); MathJax.typesetPromise(); }
});
