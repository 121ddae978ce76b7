// Answers as Markdown, safely: markdown-it with raw HTML off (a `<script>` in a document is text) and
// its link validation (no javascript:/vbscript:/file: links). Its output reaches innerHTML only through
// the page's Trusted Types policy `mrpvm-markdown` (the CSP requires one for every HTML sink).

import markdownit from '/vendor/markdown-it-15.0.3/markdown-it.esm.min.mjs';

const md = markdownit({html: false, linkify: false, typographer: false, breaks: false});

const renderToken = (tokens, index, options, env, self) => self.renderToken(tokens, index, options);
const linkOpen = md.renderer.rules.link_open || renderToken;
md.renderer.rules.link_open = (tokens, index, options, env, self) => {
  tokens[index].attrSet('target', '_blank');
  tokens[index].attrSet('rel', 'noopener noreferrer');
  return linkOpen(tokens, index, options, env, self);
};

const policy = window.trustedTypes
  ? window.trustedTypes.createPolicy('mrpvm-markdown', {createHTML: (html) => html})
  : {createHTML: (html) => html};

/** Render `text` as Markdown into `element` (replacing its content). */
export function renderMarkdown(element, text) {
  element.innerHTML = policy.createHTML(md.render(String(text ?? '')));
  element.classList.add('markdown');
  return element;
}
