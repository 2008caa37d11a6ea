// Copy buttons: `<button data-copy="#id">` copies the whole text of the element it names
// (a value cut with "…" on screen is whole in the page). The clipboard API needs a secure
// context (https or localhost); over plain http a hidden textarea and execCommand do it.
// Progressive enhancement only: without JavaScript the text is there to select.
function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.focus();
  area.select();
  const done = document.execCommand('copy');
  area.remove();
  return done ? Promise.resolve() : Promise.reject(new Error('copy refused'));
}
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.querySelector(button.getAttribute('data-copy'));
  if (!source) return;
  const label = button.dataset.label ?? button.textContent;
  button.dataset.label = label;
  copyText(source.textContent.trim()).then(
    () => { button.textContent = 'Copied'; },
    () => { button.textContent = 'Select and copy'; },
  ).finally(() => setTimeout(() => { button.textContent = label; }, 1500));
});
// htmx requests carry the page's CSRF token (the forms carry it as a field).
document.addEventListener('htmx:configRequest', (event) => {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) event.detail.headers['x-csrf-token'] = meta.getAttribute('content');
});
