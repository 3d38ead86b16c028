import Hummingbird

/// Everything the page loads, served by the binary itself: no CDN, no framework, no file
/// beside the program to go missing. The script is the page's only one (the content
/// security policy admits no other and no inline script).
enum WindowAssets {
    static func response(for name: String) throws -> Response {
        let (type, body): (String, String) =
            switch name {
            case "app.css": ("text/css; charset=utf-8", css)
            case "app.js": ("text/javascript; charset=utf-8", script)
            case "icon.svg": ("image/svg+xml", icon)
            default: throw HTTPError(.notFound)
            }
        return Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The application's icon (also installed for the desktop's menu).
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
        <rect x="4" y="4" width="56" height="56" rx="12" fill="#5b6b7f"/>
        <circle cx="24" cy="26" r="11" fill="none" stroke="#f4d35e" stroke-width="6"/>
        <path d="M31 33 L50 52 M42 44 L47 39 M46 48 L51 43" stroke="#f4d35e" stroke-width="6" stroke-linecap="round" fill="none"/>
        </svg>

        """

    static let css = """
        :root { color-scheme: light dark; --line: #c8ccd2; --accent: #2f6fde; --danger: #b3261e; font: 14px/1.45 system-ui, sans-serif; }
        body { margin: 0; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        .toolbar { display: flex; gap: .5rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
        .toolbar h1 { font-size: 1.1rem; margin: 0 1rem 0 0; display: flex; gap: .4rem; align-items: center; }
        .search { margin-left: auto; }
        .search input { width: 16rem; padding: .3rem .5rem; }
        .button, button { display: inline-block; padding: .3rem .7rem; border: 1px solid var(--line); border-radius: 6px; background: Canvas; color: CanvasText; text-decoration: none; font: inherit; cursor: pointer; }
        .button:focus-visible, button:focus-visible, a:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; }
        button.danger { border-color: var(--danger); color: var(--danger); }
        .layout { display: grid; grid-template-columns: 15rem 1fr; min-height: calc(100vh - 3.5rem); }
        nav { border-right: 1px solid var(--line); padding: .5rem 1rem; }
        nav h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: GrayText; margin: 1rem 0 .3rem; }
        nav ul { list-style: none; margin: 0; padding: 0; }
        nav li { padding: .2rem .4rem; border-radius: 6px; display: flex; justify-content: space-between; }
        nav li.current { background: color-mix(in srgb, var(--accent) 18%, Canvas); }
        nav a { color: inherit; text-decoration: none; }
        .lockstate { color: GrayText; font-size: .8rem; }
        main { padding: .5rem 1rem; overflow: auto; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); }
        th button { border: 0; padding: 0; font-weight: 600; background: none; }
        th[aria-sort="ascending"] button::after { content: " ▲"; }
        th[aria-sort="descending"] button::after { content: " ▼"; }
        .count { color: GrayText; }
        .detail dl.attributes, .editor { max-width: 48rem; }
        dl.attributes { display: grid; grid-template-columns: 14rem 1fr; gap: .15rem 1rem; }
        dl.attributes dt { color: GrayText; }
        dl.attributes dd { margin: 0; overflow-wrap: anywhere; }
        .fingerprint { font-family: ui-monospace, monospace; font-size: .85rem; }
        .secret { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .5rem 0; }
        output#secret { font-family: ui-monospace, monospace; padding: .2rem .4rem; background: color-mix(in srgb, CanvasText 8%, Canvas); border-radius: 4px; }
        output#secret:empty { display: none; }
        form.editor, form.delete, form.trust, form.export, fieldset.policies { display: flex; flex-direction: column; gap: .5rem; margin: 1rem 0; }
        fieldset.policies { border: 1px solid #ccc; padding: .5rem; }
        ol.chain li[aria-current] { font-weight: bold; }
        p.valid { color: #1a6b1a; } p.invalid { color: #a31515; }
        form label { display: flex; flex-direction: column; gap: .2rem; }
        form.inline, form.inline label { flex-direction: row; display: flex; gap: .5rem; align-items: center; }
        form.delete label:first-of-type { flex-direction: row; align-items: center; }
        #banner { position: fixed; right: 1rem; bottom: 1rem; z-index: 10; max-width: 32rem; }
        #offline { position: fixed; left: 1rem; bottom: 1rem; z-index: 10; max-width: 32rem; }
        .notice { background: color-mix(in srgb, green 15%, Canvas); padding: .4rem 1rem; margin: 0; }
        .error { background: color-mix(in srgb, var(--danger) 15%, Canvas); padding: .4rem 1rem; margin: 0; }
        .error:empty { display: none; }
        .drop { border: 2px dashed var(--line); border-radius: 8px; padding: 2rem; text-align: center; }
        .drop.over { border-color: var(--accent); }
        dialog { border: 1px solid var(--line); border-radius: 10px; max-width: 26rem; }
        dialog form { display: flex; flex-direction: column; gap: .6rem; }
        dialog h2 { font-size: 1rem; }
        article.profile { border-top: 1px solid var(--line); padding-top: .5rem; }

        """

    static let script = """
        "use strict";
        (() => {
          const $ = (selector) => document.querySelector(selector);
          const csrf = $('meta[name="csrf-token"]').content;
          const banner = (text) => { $("#banner").textContent = ""; const p = document.createElement("p"); p.className = "notice"; p.textContent = text; $("#banner").append(p); };

          // Search as you type, over the rows' names, kinds, accounts, services and servers.
          const table = $("#items");
          const search = $("#search");
          if (search && table) {
            search.addEventListener("input", () => {
              const query = search.value.trim().toLowerCase();
              let shown = 0;
              for (const row of table.tBodies[0].rows) {
                const hit = !query || row.dataset.search.includes(query);
                row.hidden = !hit;
                if (hit) shown += 1;
              }
              const count = $("#count");
              if (count) count.textContent = shown + " items";
            });
          } else if (search) {
            search.addEventListener("keydown", (event) => {
              if (event.key === "Enter") location.href = "/?keychain=" + encodeURIComponent(new URLSearchParams(location.search).get("keychain") || "login");
            });
          }

          // Sorting by a column: click its heading again to reverse.
          if (table) {
            for (const button of table.querySelectorAll("thead button")) {
              button.addEventListener("click", () => {
                const column = Number(button.dataset.column);
                const heading = button.closest("th");
                const ascending = heading.getAttribute("aria-sort") !== "ascending";
                for (const other of table.querySelectorAll("thead th")) other.removeAttribute("aria-sort");
                heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
                const rows = Array.from(table.tBodies[0].rows);
                rows.sort((a, b) => (ascending ? 1 : -1) * a.cells[column].textContent.localeCompare(b.cells[column].textContent, undefined, { numeric: true, sensitivity: "base" }));
                for (const row of rows) table.tBodies[0].append(row);
              });
            }
          }

          // Show or copy a secret: the keychain password every time, checked by securityd's enclave.
          const dialog = $("#reveal-dialog");
          let pending = null;
          const ask = (button, action) => {
            pending = { button, action };
            $("#reveal-passcode").value = "";
            $("#reveal-error").textContent = "";
            $("#reveal-prompt").textContent = "Enter the keychain password to " + action + " the " + button.dataset.noun + ".";
            dialog.showModal();
            $("#reveal-passcode").focus();
          };
          const show = $("#show-secret");
          if (show) show.addEventListener("click", () => {
            const output = $("#secret");
            if (output.textContent) { output.textContent = ""; show.textContent = "Show " + show.dataset.noun; return; }
            ask(show, "show");
          });
          const copy = $("#copy-secret");
          if (copy) copy.addEventListener("click", () => ask(copy, "copy"));
          if (dialog) {
            $("#reveal-deny").addEventListener("click", () => { $("#reveal-passcode").value = ""; dialog.close(); pending = null; });
            $("#reveal-form").addEventListener("submit", async (event) => {
              event.preventDefault();
              const field = $("#reveal-passcode");
              const body = new URLSearchParams({ id: pending.button.dataset.item, keychain: pending.button.dataset.keychain, passcode: field.value });
              field.value = "";
              let answer;
              try {
                const response = await fetch("/reveal", { method: "POST", body, headers: { "X-CSRF-Token": csrf }, cache: "no-store", credentials: "same-origin" });
                answer = await response.json();
              } catch (error) {
                answer = { error: "Keychain Access cannot be reached." };
              }
              if (answer.error) { $("#reveal-error").textContent = answer.error; return; }
              dialog.close();
              if (pending.action === "copy") {
                try {
                  await navigator.clipboard.writeText(answer.secret);
                  banner("Copied. The clipboard is cleared in 30 seconds.");
                  setTimeout(() => navigator.clipboard.writeText("").catch(() => {}), 30000);
                } catch (error) {
                  banner("The browser did not allow copying.");
                }
              } else {
                $("#secret").textContent = answer.secret;
                show.textContent = "Hide " + show.dataset.noun;
              }
              pending = null;
            });
          }

          // Import: a file chosen or dropped, sent as it is with its passphrase.
          const importForm = $("#import-form");
          if (importForm) {
            const file = $("#import-file");
            const drop = $("#drop-zone");
            drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
            drop.addEventListener("dragleave", () => drop.classList.remove("over"));
            drop.addEventListener("drop", (event) => { event.preventDefault(); drop.classList.remove("over"); file.files = event.dataTransfer.files; });
            importForm.addEventListener("submit", async (event) => {
              event.preventDefault();
              const result = $("#import-result");
              const chosen = file.files[0];
              if (!chosen) { result.textContent = "Choose a file first."; return; }
              const passphrase = $("#import-passphrase");
              const headers = { "X-CSRF-Token": csrf, "X-Import-Passphrase": encodeURIComponent(passphrase.value), "Content-Type": "application/octet-stream" };
              passphrase.value = "";
              const response = await fetch("/import?keychain=" + encodeURIComponent(importForm.dataset.keychain), { method: "POST", body: await chosen.arrayBuffer(), headers });
              const answer = await response.json();
              result.textContent = answer.error || answer.imported;
              result.className = answer.error ? "error" : "notice";
            });
          }

          // Live state: reload when the keychain changed elsewhere (unless the user is typing).
          // Only for a message of the run that served this page, and never after its socket
          // closed: once keychain-access stops, anyone may take its port (docs/SECURITY.md).
          const busy = () => (dialog && dialog.open) || (search && search.value) ||
            Array.from(document.querySelectorAll("input:not([type=hidden]):not([type=search]),textarea"))
              .some((field) => field.type === "checkbox" ? field.checked !== field.defaultChecked : field.value !== field.defaultValue) ||
            Array.from(document.querySelectorAll("select")).some((select) => Array.from(select.options).some((option) => option.selected !== option.defaultSelected));
          const connect = () => {
            const keychain = new URLSearchParams(location.search).get("keychain") || "login";
            const socket = new WebSocket("ws://" + location.host + "/live?keychain=" + encodeURIComponent(keychain));
            const offline = $("#offline");
            socket.addEventListener("message", (event) => {
              const state = JSON.parse(event.data);
              if (state.run !== document.body.dataset.run) { socket.close(); return; }
              if (state.offline) { offline.textContent = "securityd cannot be reached. This page will recover when it is back."; offline.hidden = false; return; }
              offline.hidden = true;
              const shown = document.body.dataset.generation;
              if (shown && state.generation !== shown) {
                if (busy()) banner("The keychain changed elsewhere: reload to see it.");
                else location.replace(location.href);
              }
            });
            socket.addEventListener("close", () => {
              offline.textContent = "Keychain Access has stopped: run keychain-access to open it again.";
              offline.hidden = false;
            });
          };
          connect();
        })();

        """
}
