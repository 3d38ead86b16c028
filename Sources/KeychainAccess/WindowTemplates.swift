import Mustache

/// HTML escaping by Unicode scalar: swift-mustache's own escapes by `Character`, so a quote
/// followed by a combining mark (one Character, not `"`) went out as a bare quote — an item's
/// name could close an attribute.
struct ScalarHTML: MustacheContentType {
    /// By UTF-8 byte, which is by scalar for these five: each is one ASCII byte, and no byte
    /// of a longer scalar is below 0x80. A text with none of them is returned as it is.
    func escapeText(_ text: String) -> String {
        var utf8 = text
        let escaped = utf8.withUTF8 { bytes -> String? in
            guard bytes.contains(where: Self.needsEscaping) else { return nil }
            var escaped: [UInt8] = []
            escaped.reserveCapacity(bytes.count + 16)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "<"): escaped += "&lt;".utf8
                case UInt8(ascii: ">"): escaped += "&gt;".utf8
                case UInt8(ascii: "&"): escaped += "&amp;".utf8
                case UInt8(ascii: "\""): escaped += "&quot;".utf8
                case UInt8(ascii: "'"): escaped += "&#39;".utf8
                default: escaped.append(byte)
                }
            }
            return String(decoding: escaped, as: UTF8.self)
        }
        return escaped ?? text
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }
}

/// The window's one page, as a Mustache template: `{{name}}` escapes HTML (`& < > " '`, by
/// Unicode scalar: ``ScalarHTML``), and
/// no value is ever put in with `{{{…}}}`. Its sections are the views: the list, an item,
/// the editor, the profiles, the import, the health report. No inline script or style:
/// the content security policy forbids them; `/assets/app.js` does what needs script.
enum WindowTemplates {
    static let library: MustacheLibrary = {
        MustacheContentTypes.register(ScalarHTML(), named: "SCALAR_HTML")
        var library = MustacheLibrary()
        // A template that does not parse is a bug found by the first test that renders it.
        try! library.register(MustacheTemplate(string: page), named: "page")
        return library
    }()

    static func render(_ context: [String: Any]) -> String {
        library.render(context, withTemplate: "page") ?? ""
    }

    static let page = """
        {{% CONTENT_TYPE: SCALAR_HTML }}<!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="csrf-token" content="{{csrf}}">
        <title>{{title}} — Keychain Access</title>
        <link rel="stylesheet" href="/assets/app.css">
        <link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
        <script src="/assets/app.js" defer></script>
        </head>
        <body data-generation="{{generation}}" data-run="{{run}}">
        <header class="toolbar">
          <h1><img src="/assets/icon.svg" alt="" width="24" height="24"> Keychain Access</h1>
          <a class="button" href="/new?kind=password&amp;keychain={{keychainID}}">New Password Item</a>
          <a class="button" href="/new?kind=note&amp;keychain={{keychainID}}">New Secure Note</a>
          <a class="button" href="/import?keychain={{keychainID}}">Import Items</a>
          <a class="button" href="/health?keychain={{keychainID}}">Keychain Health</a>
          <a class="button" href="/profiles?keychain={{keychainID}}">Profiles</a>
          <a class="button" href="/activity?keychain={{keychainID}}">Activity</a>
          <label class="search"><span class="visually-hidden">Search</span><input type="search" id="search" placeholder="Search" autocomplete="off" aria-controls="items"></label>
        </header>
        <div id="banner" role="status" aria-live="polite">{{#notice}}<p class="notice">{{notice}}</p>{{/notice}}</div>
        {{#error}}<p id="failure" class="error" role="alert">{{error}}</p>{{/error}}
        <p id="offline" class="error" role="alert" hidden>securityd cannot be reached. This page will recover when it is back.</p>
        <div class="layout">
        <nav aria-label="Keychains and categories">
          <h2>Keychains</h2>
          <ul class="keychains">
          {{#keychains}}<li{{#current}} class="current"{{/current}}><a href="/?keychain={{id}}&amp;category={{category}}"{{#current}} aria-current="page"{{/current}}>{{name}}</a> <span class="lockstate" data-keychain="{{id}}">{{state}}</span></li>
          {{/keychains}}
          </ul>
          <h2>Category</h2>
          <ul class="categories">
          {{#categories}}<li{{#current}} class="current"{{/current}}><a href="/?keychain={{keychainID}}&amp;category={{id}}"{{#current}} aria-current="page"{{/current}}>{{title}}</a></li>
          {{/categories}}
          </ul>
        </nav>
        <main id="main">
        {{#keychain}}
        <section class="lock" aria-label="Lock state of {{name}}">
          {{#locked}}
          <form method="post" action="/unlock" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{id}}">
            <label>The keychain “{{name}}” is locked. Password <input type="password" name="password" id="unlock-password" autocomplete="current-password" required></label>
            <button type="submit" id="unlock">Unlock</button>
          </form>
          {{/locked}}
          {{#unlocked}}
          <form method="post" action="/lock" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{id}}">
            <span>The keychain “{{name}}” is unlocked.</span> <button type="submit" id="lock">Lock “{{name}}”</button>
          </form>
          <form method="post" action="/settings" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{id}}">
            <label>Lock after <input type="number" name="minutes" id="lock-minutes" min="0" max="10080" value="{{minutes}}"> minutes of inactivity (0: never)</label>
            {{#isFile}}<label><input type="checkbox" name="sleep" value="yes" id="lock-on-sleep"{{#lockOnSleep}} checked{{/lockOnSleep}}> Lock when sleeping</label>{{/isFile}}
            <button type="submit" id="save-settings">Save Settings</button>
          </form>
          {{/unlocked}}
        </section>
        {{/keychain}}

        {{#list}}
        <table id="items" aria-label="Items of {{keychainName}}">
          <thead><tr>
            <th aria-sort="ascending"><button type="button" data-column="0">Name</button></th>
            <th><button type="button" data-column="1">Kind</button></th>
            <th><button type="button" data-column="2">Date Modified</button></th>
            <th><button type="button" data-column="3">Keychain</button></th>
          </tr></thead>
          <tbody>
          {{#items}}<tr data-search="{{search}}"><td><a href="/item/{{id}}?keychain={{keychainID}}">{{name}}</a></td><td>{{kind}}</td><td>{{modified}}</td><td>{{keychain}}</td></tr>
          {{/items}}
          </tbody>
        </table>
        <p id="count" class="count">{{count}} items</p>
        {{/list}}

        {{#item}}
        <article class="detail" aria-labelledby="item-title">
          <h2 id="item-title">{{name}}</h2>
          <p class="kind">{{kind}} in “{{keychain}}”</p>
          {{#hasSecret}}
          <div class="secret">
            <button type="button" id="show-secret" data-item="{{id}}" data-keychain="{{keychainID}}" data-noun="{{noun}}">Show {{noun}}</button>
            <button type="button" id="copy-secret" data-item="{{id}}" data-keychain="{{keychainID}}" data-noun="{{noun}}">Copy {{noun}} to Clipboard</button>
            <output id="secret" aria-label="The {{noun}}" aria-live="polite"></output>
            {{^readOnly}}<a class="button" href="/item/{{id}}/edit?keychain={{keychainID}}">Edit</a>{{/readOnly}}
          </div>
          {{/hasSecret}}
          <h3>Attributes</h3>
          <dl class="attributes">
          {{#attributes}}<dt>{{name}}</dt><dd>{{value}}</dd>
          {{/attributes}}
          </dl>
          <h3>Access Control</h3>
          <dl class="attributes">
            <dt>Access group</dt><dd>{{group}}</dd>
            <dt>Protection class</dt><dd>{{protection}}</dd>
            <dt>Synchronizable</dt><dd>{{synchronizable}}</dd>
            <dt>Access control</dt><dd>{{#controls}}{{.}} {{/controls}}{{^controls}}none: readable by its group's applications while the keychain allows{{/controls}}</dd>
            {{#scope}}<dt>Secret Service</dt><dd>seen by the clients of scope “{{scope}}”</dd>{{/scope}}
          </dl>
          {{#certificate}}
          <h3>Certificate</h3>
          <dl class="attributes">
            <dt>Subject</dt><dd>{{subject}}</dd>
            <dt>Issuer</dt><dd>{{issuer}}</dd>
            <dt>Serial number</dt><dd>{{serial}}</dd>
            <dt>Not valid before</dt><dd>{{notBefore}}</dd>
            <dt>Not valid after</dt><dd>{{notAfter}}</dd>
            <dt>Public key</dt><dd>{{publicKey}}</dd>
            <dt>SHA-256 fingerprint</dt><dd class="fingerprint">{{sha256}}</dd>
            <dt>SHA-1 fingerprint</dt><dd class="fingerprint">{{sha1}}</dd>
            {{#names}}<dt>Subject alternative name</dt><dd>{{.}}</dd>{{/names}}
          </dl>
          <h3>Certificate Chain</h3>
          <ol id="chain" class="chain" aria-label="Certificate chain, root first">
          {{#chain}}<li{{#this}} aria-current="true"{{/this}}>{{name}}</li>
          {{/chain}}
          </ol>
          <p id="verdict" class="{{#trusted}}valid{{/trusted}}{{^trusted}}invalid{{/trusted}}">{{verdict}}</p>
          <h3>Trust</h3>
          <form method="post" action="/item/{{id}}/trust" class="trust">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{keychainID}}">
            <label>When using this certificate
              <select name="trust" id="trust">{{#choices}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{title}}</option>{{/choices}}</select>
            </label>
            <fieldset class="policies"><legend>For each policy</legend>
            {{#policies}}<label>{{title}}
              <select name="trust-{{name}}" id="trust-{{name}}">{{#choices}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{title}}</option>{{/choices}}</select>
            </label>
            {{/policies}}
            {{#kept}}<p class="note">{{.}} more setting(s) made with <code>security add-trusted-cert</code> (a host name, an application, another policy) are kept.</p>{{/kept}}
            </fieldset>
            <label>Keychain password <input type="password" name="passcode" id="trust-passcode" autocomplete="current-password"></label>
            <button type="submit" id="save-trust">Save Trust Settings</button>
          </form>
          <h3>Export</h3>
          <form method="post" action="/item/{{id}}/export" class="export">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{keychainID}}">
            <label>File Format
              <select name="format" id="export-format">{{#formats}}<option value="{{value}}">{{title}}</option>{{/formats}}</select>
            </label>
            {{#hasPrivateKey}}
            <label>Password for the .p12 file <input type="password" name="passphrase" id="export-passphrase" autocomplete="new-password"></label>
            <label>Keychain password (to export the private key) <input type="password" name="passcode" id="export-passcode" autocomplete="current-password"></label>
            {{/hasPrivateKey}}
            <button type="submit" id="export">Export</button>
          </form>
          {{/certificate}}
          {{^readOnly}}
          <form method="post" action="/item/{{id}}/delete" class="delete">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{keychainID}}">
            <label><input type="checkbox" name="confirm" value="yes" id="confirm-delete" required> Delete “{{name}}” from “{{keychain}}”</label>
            <label>Keychain password (another application's item) <input type="password" name="passcode" autocomplete="current-password"></label>
            <button type="submit" id="delete" class="danger">Delete</button>
          </form>
          {{/readOnly}}
        </article>
        {{/item}}

        {{#editor}}
        <form method="post" action="{{action}}" class="editor" aria-labelledby="editor-title">
          <h2 id="editor-title">{{heading}}</h2>
          <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{keychainID}}">
          <input type="hidden" name="kind" value="{{kind}}">
          {{#isNote}}
          <label>Keychain Item Name <input name="name" id="name" value="{{name}}" required maxlength="1024"></label>
          <label>Note{{^isNew}} (leave empty to keep it){{/isNew}} <textarea name="secret" id="secret-field" rows="8"{{#isNew}} required{{/isNew}}></textarea></label>
          {{/isNote}}
          {{^isNote}}
          <label>Keychain Item Name <input name="name" id="name" value="{{name}}" required maxlength="1024"></label>
          <label>Account Name <input name="account" id="account" value="{{account}}" maxlength="1024"></label>
          <label>Password{{^isNew}} (leave empty to keep it){{/isNew}} <input type="password" name="secret" id="secret-field" autocomplete="new-password"{{#isNew}} required{{/isNew}}></label>
          {{/isNote}}
          <label>Comments <input name="comment" id="comment" value="{{comment}}" maxlength="4096"></label>
          <label>Keychain password (another application's item) <input type="password" name="passcode" autocomplete="current-password"></label>
          <button type="submit" id="save">Save</button> <a class="button" href="{{cancel}}">Cancel</a>
        </form>
        {{/editor}}

        {{#importer}}
        <form id="import-form" class="editor" aria-labelledby="import-title" data-keychain="{{keychainID}}">
          <h2 id="import-title">Import Items</h2>
          <p id="drop-zone" class="drop">Drop a .p12, .pem or .cer file here, or choose one.</p>
          <label>File <input type="file" id="import-file" accept=".p12,.pfx,.pem,.cer,.crt,.der"></label>
          <label>Passphrase (PKCS#12 files) <input type="password" id="import-passphrase" autocomplete="off"></label>
          <button type="submit" id="import">Import</button>
          <p id="import-result" role="status" aria-live="polite"></p>
        </form>
        {{/importer}}

        {{#profiles}}
        <section class="detail" aria-labelledby="profiles-title">
          <h2 id="profiles-title">Profiles</h2>
          {{#installed}}
          <article class="profile" aria-label="{{name}}">
            <h3>{{name}}</h3>
            <dl class="attributes">
              <dt>Identifier</dt><dd>{{identifier}}</dd>
              {{#organization}}<dt>Organization</dt><dd>{{organization}}</dd>{{/organization}}
              <dt>Signature</dt><dd>{{verification}}</dd>
              <dt>Installed</dt><dd>{{installed}}</dd>
              {{#payloads}}<dt>Payload</dt><dd>{{title}} ({{type}}): {{items}} items</dd>{{/payloads}}
            </dl>
            <form method="post" action="/profiles/remove" class="delete">
              <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="identifier" value="{{identifier}}">
              <label><input type="checkbox" name="confirm" value="yes" required> Remove “{{name}}” and the items it installed</label>
              <label>Keychain password <input type="password" name="passcode" autocomplete="current-password"></label>
              <button type="submit" class="danger">Remove</button>
            </form>
          </article>
          {{/installed}}
          {{^installed}}<p>No configuration profile is installed.</p>{{/installed}}
        </section>
        {{/profiles}}

        {{#activity}}
        <section class="detail" aria-labelledby="activity-title">
          <h2 id="activity-title">Activity</h2>
          <p>Requests securityd refused since it started — access denied, a wrong keychain password, no interaction allowed — newest first. Never what was asked for.</p>
          <table id="activity" aria-label="Refused requests">
            <thead><tr><th>Time (UTC)</th><th>Program</th><th>Request</th><th>Result</th></tr></thead>
            <tbody>{{#events}}<tr><td>{{time}}</td><td>{{program}} ({{pid}})</td><td>{{request}}</td><td>{{result}}</td></tr>
            {{/events}}</tbody>
          </table>
          {{^events}}<p>Nothing was refused.</p>{{/events}}
        </section>
        {{/activity}}

        {{#health}}
        <section class="detail" aria-labelledby="health-title">
          <h2 id="health-title">Keychain Health</h2>
          <p>Computed here, from the items of “{{keychainName}}”; nothing leaves this machine.</p>
          {{#needsPasscode}}
          <form method="post" action="/health" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="keychain" value="{{keychainID}}">
            <label>Keychain password, to read the passwords <input type="password" name="passcode" id="health-passcode" autocomplete="current-password"></label>
            <button type="submit" id="check-health">Check Passwords</button>
          </form>
          {{/needsPasscode}}
          {{#findings}}
          <h3>{{title}}</h3>
          <ul>{{#entries}}<li><a href="/item/{{id}}?keychain={{keychainID}}">{{name}}</a> — {{detail}}</li>{{/entries}}</ul>
          {{/findings}}
          {{#healthy}}<p>Nothing to report.</p>{{/healthy}}
        </section>
        {{/health}}
        </main>
        </div>
        <dialog id="reveal-dialog" aria-labelledby="reveal-title">
          <form id="reveal-form" method="dialog">
            <h2 id="reveal-title">Keychain Access wants to use your keychain.</h2>
            <p id="reveal-prompt">Enter the keychain password.</p>
            <label>Password <input type="password" id="reveal-passcode" autocomplete="current-password"></label>
            <p id="reveal-error" class="error" role="alert"></p>
            <button type="submit" id="reveal-allow">Allow</button>
            <button type="button" id="reveal-deny">Deny</button>
          </form>
        </dialog>
        </body>
        </html>

        """
}
