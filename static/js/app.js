// Attach the CSRF token to every htmx request (the token is in a meta tag; no inline script needed).
document.addEventListener("htmx:configRequest", function (event) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) { event.detail.headers["X-CSRFToken"] = meta.content; }
});
