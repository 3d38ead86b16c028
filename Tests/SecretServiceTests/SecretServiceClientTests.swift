import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Debian's real Secret Service clients against securityd on a private session bus, started
/// by D-Bus activation: secret-tool (libsecret), python keyring, secretstorage with both
/// session algorithms, and Chromium's own call sequence.
@Suite(.requires("dbus-daemon", "secret-tool"))
struct SecretServiceClientTests {
    @Test func secretToolStoresLooksUpSearchesAndClears() throws {
        let bus = try SessionBus()
        let stored = try bus.secretTool("store", "--label=Demo account", "service", "demo", "user", "alice", input: "s3cret ü")
        #expect(stored.status == 0, "\(stored.stderr) \(bus.keychain.logText)")
        let found = try bus.secretTool("lookup", "service", "demo", "user", "alice")
        #expect(found.status == 0 && found.stdout == "s3cret ü", "\(found.stderr)")

        // A second store with the same attributes replaces (libsecret sends replace=true).
        #expect(try bus.secretTool("store", "--label=Demo account", "service", "demo", "user", "alice", input: "newer").status == 0)
        #expect(try bus.secretTool("lookup", "service", "demo", "user", "alice").stdout == "newer")
        #expect(try bus.secretTool("store", "--label=Other", "service", "demo", "user", "bob", input: "b").status == 0)

        let listed = try bus.secretTool("search", "--all", "service", "demo")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("label = Demo account") && listed.stdout.contains("secret = newer"))
        // secret-tool prints the attributes on standard error, and each item's last path element.
        #expect(listed.stderr.contains("attribute.user = alice") && listed.stderr.contains("attribute.user = bob"))
        #expect(listed.stdout.components(separatedBy: "label = ").count == 3, "two items: \(listed.stdout)")

        // Equality on every attribute given: a value no item has finds nothing.
        #expect(try bus.secretTool("lookup", "service", "demo", "user", "carol").status != 0)
        #expect(try bus.secretTool("lookup", "service", "demo").status == 0)

        // The same item, through the keychain's own tool: the service is the label.
        let viaSecurity = try bus.security("find-generic-password", "-s", "Demo account", "-w")
        #expect(viaSecurity.status == 0 && viaSecurity.stdout == "newer\n", "\(viaSecurity.stderr)")

        #expect(try bus.secretTool("clear", "service", "demo", "user", "alice").status == 0)
        #expect(try bus.secretTool("lookup", "service", "demo", "user", "alice").status != 0)
        #expect(try bus.secretTool("lookup", "service", "demo", "user", "bob").stdout == "b")
    }

    @Test func pythonKeyringSetsGetsAndDeletes() throws {
        let bus = try SessionBus()
        let script = """
            import keyring
            # keyring chains its Secret Service backend before its libsecret one when both
            # work (libsecret's GObject bindings installed); it writes through the first.
            chosen = keyring.get_keyring()
            print(type(getattr(chosen, 'backends', [chosen])[0]).__module__)
            keyring.set_password('mail.example', 'bob', 'pw one')
            print(keyring.get_password('mail.example', 'bob'))
            keyring.set_password('mail.example', 'bob', 'pw two')
            print(keyring.get_password('mail.example', 'bob'))
            keyring.delete_password('mail.example', 'bob')
            print(keyring.get_password('mail.example', 'bob'))
            """
        let result = try bus.python(script)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "keyring.backends.SecretService\npw one\npw two\nNone\n", "\(result.stderr)")
    }

    @Test func secretstorageWithBothSessionAlgorithms() throws {
        let agent = try TemporaryKeychain.makeTemporaryDirectory() + "/agent"
        try "#!/bin/sh\n[ \"$1\" = passcode ] && echo yes\n".write(toFile: agent, atomically: true, encoding: .utf8)
        chmod(agent, 0o755)
        let bus = try SessionBus(daemonEnvironment: ["TROUSSEAU_PASSCODE_AGENT": agent])
        // secretstorage opens the DH session; with its algorithm name changed to one the
        // service refuses (NotSupported), it falls back to plain — as libsecret does.
        let script = """
            import sys, secretstorage, secretstorage.util as util
            if sys.argv[1] == 'plain':
                util.ALGORITHM_DH = 'dh-unknown'
            conn = secretstorage.dbus_init()
            collection = secretstorage.get_default_collection(conn)
            assert not collection.is_locked()
            item = collection.create_item('Item ' + sys.argv[1], {'kind': sys.argv[1], 'n': '1'}, b'secret \\x00\\xff ' + sys.argv[1].encode(), replace=False)
            assert item.get_attributes() == {'kind': sys.argv[1], 'n': '1'}, item.get_attributes()
            print(util.ALGORITHM_DH == 'dh-unknown', item.session.encrypted)
            [found] = list(collection.search_items({'kind': sys.argv[1]}))
            assert found.get_secret() == b'secret \\x00\\xff ' + sys.argv[1].encode()
            # Lock (secretstorage's, as secret-tool lock would send it) locks the collection
            # until its Unlock prompt is confirmed (here by the agent).
            collection.lock()
            assert collection.is_locked() and found.is_locked()
            try:
                found.get_secret()
                raise SystemExit('read while locked')
            except secretstorage.exceptions.LockedException:
                pass
            assert collection.unlock() is False, 'not dismissed'
            assert not collection.is_locked() and not found.is_locked()
            assert found.get_secret() == b'secret \\x00\\xff ' + sys.argv[1].encode()
            found.set_label('Renamed')
            found.set_attributes({'kind': sys.argv[1], 'n': '2'})
            found.set_secret(b'changed')
            [again] = list(collection.search_items({'n': '2', 'kind': sys.argv[1]}))
            assert again.get_label() == 'Renamed' and again.get_secret() == b'changed'
            assert list(collection.search_items({'n': '1', 'kind': sys.argv[1]})) == []
            assert again.get_created() <= again.get_modified()
            again.delete()
            assert list(collection.search_items({'kind': sys.argv[1]})) == []
            """
        let dh = try bus.python(script, ["dh"])
        #expect(dh.status == 0 && dh.stdout == "False True\n", "\(dh.stdout) \(dh.stderr)")
        let plain = try bus.python(script, ["plain"])
        #expect(plain.status == 0 && plain.stdout == "True False\n", "\(plain.stdout) \(plain.stderr)")
    }

    /// Debian's Chromium, headless, on the bus, driven over its DevTools pipe: the first run
    /// of a profile stores a persistent cookie, which Chromium encrypts under its "Chromium Safe
    /// Storage" key — so the key must be made and stored before the cookie reaches disk; the
    /// second run reads the cookie back, which it can only decrypt with the key it found.
    /// (Loading a page and exiting did not wait for the key: Chromium makes it on a task of
    /// its own, and under load the first run exited before asking for it.)
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "needs chromium (scripts/install-deps)"))
    func theRealChromiumKeepsOneSafeStorageKey() throws {
        let bus = try SessionBus()
        var environment = bus.clientEnvironment
        environment["XDG_CONFIG_HOME"] = bus.directory + "/config"
        environment["XDG_CACHE_HOME"] = bus.directory + "/cache"
        // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
        // The DevTools protocol on fds 3 and 4: JSON messages, each ended by a NUL.
        let driver = """
            import json, os, subprocess, sys, time
            profile, step = sys.argv[1], sys.argv[2]
            to_chromium, commands = os.pipe()
            replies, from_chromium = os.pipe()
            chromium = subprocess.Popen(['/bin/sh', '-c', f'exec /usr/bin/chromium --headless=new --no-sandbox '
                f'--password-store=gnome-libsecret --user-data-dir={profile} --remote-debugging-pipe '
                f'3<&{to_chromium} 4>&{from_chromium}'], pass_fds=(to_chromium, from_chromium),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.close(to_chromium); os.close(from_chromium)
            pending = b''
            def send(id, method, params={}):
                global pending
                os.write(commands, json.dumps({'id': id, 'method': method, 'params': params}).encode() + b'\\0')
                while True:
                    while b'\\0' not in pending:
                        chunk = os.read(replies, 65536)
                        if not chunk:
                            raise SystemExit(f'Chromium closed its pipe before answering {method}')
                        pending += chunk
                    message, pending = pending.split(b'\\0', 1)
                    reply = json.loads(message)
                    if reply.get('id') == id:
                        if 'error' in reply:
                            raise SystemExit(f'{method}: {reply["error"]}')
                        return reply['result']
            if step == 'store':
                send(1, 'Storage.setCookies', {'cookies': [{'name': 'kept', 'value': 'by-trousseau',
                    'domain': 'example.com', 'path': '/', 'expires': time.time() + 3600}]})
            else:
                cookies = send(1, 'Storage.getCookies')['cookies']
                print(' '.join(c['name'] + '=' + c['value'] for c in cookies))
            try:
                send(2, 'Browser.close')
            except SystemExit:
                pass  # Chromium may close the pipe as it closes, before its answer
            sys.exit(chromium.wait(timeout=60))
            """
        let profile = bus.directory + "/chromium-profile"
        let keys = """
            from client import *
            conn = connect()
            session = open_plain(conn)
            for path in ok(call(conn, ROOT, SVC, 'SearchItems', 'a{ss}', ({'application': 'chromium'},)))[0]:
                attributes = ok(call(conn, path, PROPS, 'GetAll', 's', (ITEM,)))[0]
                print(attributes['Label'][1], attributes['Attributes'][1]['xdg:schema'], bytes(ok(call(conn, path, ITEM, 'GetSecret', 'o', (session,)))[0][2]).decode())
            """
        var found: [String] = []
        for step in ["store", "read"] {
            let chromium = try CommandRunner.run(executable: "/usr/bin/python3", ["-c", driver, profile, step], environment: environment, clearing: true)
            #expect(chromium.status == 0, "\(step): \(chromium.stdout) \(chromium.stderr)")
            if step == "read" {
                #expect(chromium.stdout == "kept=by-trousseau\n", "the second run decrypted the first run's cookie: \(chromium.stdout)")
            }
            let items = try bus.python(keys)
            #expect(items.status == 0, "\(items.stderr)")
            let lines = items.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 1, "one key after \(step): \(items.stdout) \(bus.keychain.logText)")
            #expect(lines.first?.hasPrefix("Chromium Safe Storage chrome_libsecret_os_crypt_password_v2 ") == true, "\(items.stdout)")
            found.append(lines.first ?? "")
        }
        #expect(found[0] == found[1], "the second run found the first run's key")
    }

    @Test func chromiumsCallSequenceStoresItsKeyOnceAndFindsItAgain() throws {
        let bus = try SessionBus()
        let first = try bus.python("import client; client.chromium('chromium')")
        #expect(first.status == 0 && first.stdout.hasPrefix("created "), "\(first.stderr)")
        let second = try bus.python("import client; client.chromium('chromium')")
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == "found " + first.stdout.dropFirst("created ".count), "the same key, not another")
        // Chrome's item is another application's: Chromium does not see it, and makes its own.
        let chrome = try bus.python("import client; client.chromium('chrome')")
        #expect(chrome.stdout.hasPrefix("created "), "\(chrome.stderr)")
        let viaSecurity = try bus.security("find-generic-password", "-s", "Chromium Safe Storage", "-w")
        #expect(viaSecurity.status == 0, "\(viaSecurity.stderr)")
    }
}
