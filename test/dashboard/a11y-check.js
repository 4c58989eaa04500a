/* global document, getComputedStyle, innerWidth */
// Evaluated in the dashboard's page by test/dashboard/dashboard.test.ts: the accessibility rules the
// dashboard promises, checked on what the browser actually renders. Returns a list of problems.
(() => {
  const problems = [];
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const describe = (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${(el.textContent || '').trim().slice(0, 40)}"`;

  // Every control has a name: a <label>, aria-label or aria-labelledby.
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden' || !visible(el)) continue;
    const named = (el.labels && el.labels.length > 0) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    if (!named) problems.push(`control without a label: ${describe(el)}`);
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (!visible(el)) continue;
    if (!(el.textContent || '').trim() && !el.getAttribute('aria-label')) problems.push(`button or link without a name: ${describe(el)}`);
  }
  if (document.querySelectorAll('h1').length !== 1) problems.push(`${document.querySelectorAll('h1').length} h1 elements`);

  // Text contrast (WCAG 2 AA): 4.5:1, or 3:1 for large text; disabled controls are exempt.
  const rgba = (c) => {
    const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : [0, 0, 0, 1];
  };
  const luminance = ([r, g, b]) => {
    const f = (v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0.5) return c;
    }
    return [255, 255, 255, 1];
  };
  for (const el of document.querySelectorAll('body *')) {
    const ownText = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!ownText || !visible(el) || el.closest('[disabled], canvas, noscript')) continue;
    const s = getComputedStyle(el);
    const fg = rgba(s.color);
    const bg = background(el);
    const [l1, l2] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(s.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) problems.push(`contrast ${ratio.toFixed(2)}:1 for ${describe(el)} (${s.color} on rgb(${bg.slice(0, 3).join(', ')}))`);
  }

  // Nothing wider than the screen: wide tables scroll inside their own region.
  if (document.documentElement.scrollWidth > innerWidth + 1) problems.push(`the page is ${document.documentElement.scrollWidth}px wide on a ${innerWidth}px screen`);
  return problems;
})();
