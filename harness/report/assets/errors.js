/* Collects script errors, failed loads and console.error calls into #js-errors (hidden),
   so a problem on the page can be found without opening the browser's developer tools. */
(function () {
  'use strict';
  var errs = [];
  function flush() {
    var el = document.getElementById('js-errors');
    if (el) {
      el.textContent = errs.join('\n');
      el.setAttribute('data-count', String(errs.length));
    }
  }
  function note(msg) { errs.push(String(msg)); flush(); }
  window.p10NoteError = note;
  window.addEventListener('error', function (ev) {
    var t = ev.target;
    if (t && t !== window && (t.src || t.href)) {
      note('failed to load ' + (t.src || t.href));
    } else {
      note('error: ' + (ev.message || ev.type) + (ev.filename ? ' at ' + ev.filename + ':' + ev.lineno : ''));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (ev) { note('unhandled rejection: ' + ev.reason); });
  var original = console.error;
  console.error = function () {
    note('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
  document.addEventListener('DOMContentLoaded', flush);
})();
