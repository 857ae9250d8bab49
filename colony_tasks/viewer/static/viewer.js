/* colony-tasks viewer: live updates by polling (every 2 s while the tab is visible).
 *
 * List pages poll their partial and replace the live region when it changed. A thread page
 * polls /tasks/{id}/live?after=ID and appends the new items. All HTML comes from the server's
 * autoescaping templates; this script never builds markup from message text.
 */
(function () {
  "use strict";

  var INTERVAL_MS = 2000;
  var dot = document.getElementById("live-dot");

  function setLive(ok) {
    if (dot) {
      dot.classList.toggle("ok", ok);
      dot.classList.toggle("down", !ok);
      dot.title = ok ? "Live: updates every 2 s" : "Not connected: retrying";
    }
  }

  function every(task) {
    var busy = false;
    function tick() {
      if (busy || document.hidden) {
        return;
      }
      busy = true;
      task()
        .then(function () { setLive(true); })
        .catch(function () { setLive(false); })
        .then(function () { busy = false; });
    }
    window.setInterval(tick, INTERVAL_MS);
    document.addEventListener("visibilitychange", tick);
    tick();
  }

  function get(url, as) {
    return window.fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
      if (!r.ok) {
        throw new Error("HTTP " + r.status);
      }
      return as === "json" ? r.json() : r.text();
    });
  }

  function fragment(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  function replace(id, html) {
    var node = document.getElementById(id);
    if (node && typeof html === "string" && node.dataset.last !== html) {
      node.replaceChildren(fragment(html));
      node.dataset.last = html;
    }
  }

  function watchRegion(region) {
    var last = null;
    every(function () {
      return get(region.dataset.liveSrc, "text").then(function (html) {
        if (html !== last) {
          region.replaceChildren(fragment(html));
        }
        last = html;
      });
    });
  }

  function watchThread(list) {
    var after = list.dataset.after || "0";
    var base = list.dataset.liveSrc;
    every(function () {
      var url = base + (base.indexOf("?") >= 0 ? "&" : "?") + "after=" + encodeURIComponent(after);
      return get(url, "json").then(function (data) {
        if (data.items_html) {
          var nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 120;
          Array.prototype.slice.call(fragment(data.items_html).children).forEach(function (item) {
            if (!document.getElementById(item.id)) {
              item.classList.add("fresh");
              list.appendChild(item);
            }
          });
          var empty = document.getElementById("thread-empty");
          if (empty) {
            empty.hidden = true;
          }
          if (nearBottom) {
            window.scrollTo(0, document.body.scrollHeight);
          }
        }
        after = String(data.last_id);
        list.dataset.after = after;
        replace("thread-head", data.head_html);
        replace("turn-hint", data.hint_html);
        replace("thread-side", data.side_html);
      });
    });
  }

  var thread = document.getElementById("thread");
  if (thread) {
    watchThread(thread);
  }
  var region = document.querySelector("[data-live-src]:not(#thread)");
  if (region) {
    watchRegion(region);
  }
})();
