// Copy buttons: `<button data-copy="#id">` copies the text of the element it names.
// Progressive enhancement only: without JavaScript the text is there to select.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.querySelector(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => { button.textContent = label; }, 1500);
  });
});
// htmx requests carry the page's CSRF token (the forms carry it as a field).
document.addEventListener('htmx:configRequest', (event) => {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) event.detail.headers['x-csrf-token'] = meta.getAttribute('content');
});
