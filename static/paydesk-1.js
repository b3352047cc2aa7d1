// Paydesk's small page behaviours. No inline scripts anywhere (the CSP
// forbids them); everything hangs off data- attributes.
(function () {
  "use strict";

  function ready(fn) {
    if (document.readyState !== "loading") fn();
    else document.addEventListener("DOMContentLoaded", fn);
  }

  function flash(message) {
    var box = document.getElementById("flash");
    if (!box) return;
    box.textContent = message;
    box.className = "error";
  }

  ready(function () {
    // <select data-autosubmit> submits its form when changed.
    document.body.addEventListener("change", function (e) {
      var el = e.target;
      if (el && el.matches && el.matches("select[data-autosubmit]") && el.form) el.form.requestSubmit();
    });

    // htmx does not swap error answers; say what happened instead.
    document.body.addEventListener("htmx:responseError", function (e) {
      var xhr = e.detail.xhr;
      var text = "The request failed (HTTP " + xhr.status + ").";
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var p = doc.querySelector("main p");
      if (p && p.textContent) text = p.textContent;
      flash(text);
    });
    document.body.addEventListener("htmx:sendError", function () {
      flash("Paydesk could not be reached. Check your connection and try again.");
    });
  });
})();
