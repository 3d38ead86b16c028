/// The Python side of the Secret Service tests: raw calls through jeepney (the D-Bus library
/// secretstorage itself uses), so a test can send exactly what a client sends — or what no
/// client should.
enum SecretServiceClients {
    static let python = #"""
        import base64, os, sys
        from jeepney import new_method_call, DBusAddress, MessageType, HeaderFields, MatchRule
        from jeepney.io.blocking import open_dbus_connection
        from jeepney.bus_messages import message_bus

        NAME = 'org.freedesktop.secrets'
        ROOT = '/org/freedesktop/secrets'
        SVC = 'org.freedesktop.Secret.Service'
        COLL = 'org.freedesktop.Secret.Collection'
        ITEM = 'org.freedesktop.Secret.Item'
        SESS = 'org.freedesktop.Secret.Session'
        PROMPT = 'org.freedesktop.Secret.Prompt'
        PROPS = 'org.freedesktop.DBus.Properties'
        LOGIN = ROOT + '/collection/login'
        ALIAS = ROOT + '/aliases/default'

        def connect():
            return open_dbus_connection(bus='SESSION')

        def call(conn, path, interface, member, signature=None, body=()):
            message = new_method_call(DBusAddress(path, bus_name=NAME, interface=interface), member, signature, body)
            reply = conn.send_and_get_reply(message, timeout=20)
            if reply.header.message_type == MessageType.error:
                return ('error', reply.header.fields[HeaderFields.error_name], reply.body)
            return ('ok', reply.body)

        def ok(result):
            assert result[0] == 'ok', result
            return result[1]

        def error(result):
            assert result[0] == 'error', result
            return result[1]

        def open_plain(conn):
            return ok(call(conn, ROOT, SVC, 'OpenSession', 'sv', ('plain', ('s', ''))))[1]

        def open_dh(conn):
            from secretstorage.dhcrypto import Session, int_to_bytes
            session = Session()
            output, path = ok(call(conn, ROOT, SVC, 'OpenSession', 'sv',
                                   ('dh-ietf1024-sha256-aes128-cbc-pkcs7', ('ay', int_to_bytes(session.my_public_key)))))
            session.set_server_public_key(int.from_bytes(output[1], 'big'))
            return path, session.aes_key

        def encrypt(key, plaintext, iv=None):
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            iv = iv or os.urandom(16)
            pad = 16 - len(plaintext) % 16
            encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
            return iv, encryptor.update(plaintext + bytes([pad]) * pad) + encryptor.finalize()

        def create(conn, session, label, attributes, secret, replace=True, parameters=b''):
            properties = {ITEM + '.Label': ('s', label), ITEM + '.Attributes': ('a{ss}', attributes)}
            return call(conn, LOGIN, COLL, 'CreateItem', 'a{sv}(oayays)b',
                        (properties, (session, parameters, secret, 'text/plain'), replace))

        def unlock(conn, paths):
            """Service.Unlock, and when it needs a prompt, Prompt and its Completed signal:
            (unlocked, prompt path, Completed's body or None)."""
            unlocked, prompt = ok(call(conn, ROOT, SVC, 'Unlock', 'ao', (paths,)))
            if prompt == '/':
                return unlocked, prompt, None
            rule = MatchRule(type='signal', interface=PROMPT, member='Completed', path=prompt)
            conn.send_and_get_reply(message_bus.AddMatch(rule))
            with conn.filter(rule) as queue:
                ok(call(conn, prompt, PROMPT, 'Prompt', 's', ('',)))
                signal = conn.recv_until_filtered(queue, timeout=20)
            assert signal.header.fields[HeaderFields.signature] == 'bv', signal.header.fields
            return unlocked, prompt, signal.body

        def prompt(conn, path):
            """Prompt at `path` and its Completed signal's body: (dismissed, result)."""
            rule = MatchRule(type='signal', interface=PROMPT, member='Completed', path=path)
            conn.send_and_get_reply(message_bus.AddMatch(rule))
            with conn.filter(rule) as queue:
                ok(call(conn, path, PROMPT, 'Prompt', 's', ('',)))
                signal = conn.recv_until_filtered(queue, timeout=20)
            return signal.body

        def create_collection(conn, label, alias=''):
            return ok(call(conn, ROOT, SVC, 'CreateCollection', 'a{sv}s', ({COLL + '.Label': ('s', label)}, alias)))

        def store_in(conn, collection, session, label, attributes, secret):
            properties = {ITEM + '.Label': ('s', label), ITEM + '.Attributes': ('a{ss}', attributes)}
            return ok(call(conn, collection, COLL, 'CreateItem', 'a{sv}(oayays)b',
                           (properties, (session, b'', secret, 'text/plain'), False)))[0]

        def items_of(conn, collection):
            return ok(call(conn, collection, PROPS, 'Get', 'ss', (COLL, 'Items')))[0][1]

        def chromium(application):
            """Chromium's own Secret Service client (components/os_crypt/async/browser/
            freedesktop_secret_key_provider.cc), call for call."""
            conn = connect()
            collection = ok(call(conn, ROOT, SVC, 'ReadAlias', 's', ('default',)))[0]
            if collection == '/':
                collection = ok(call(conn, ROOT, SVC, 'CreateCollection', 'a{sv}s',
                                     ({COLL + '.Label': ('s', 'Default Keyring')}, 'default')))[0]
            ok(call(conn, collection, PROPS, 'Get', 'ss', (COLL, 'Label')))
            unlocked, prompt = ok(call(conn, ROOT, SVC, 'Unlock', 'ao', ([collection],)))
            assert unlocked == [collection] and prompt == '/', (unlocked, prompt)
            session = open_plain(conn)
            items = ok(call(conn, collection, COLL, 'SearchItems', 'a{ss}', ({'application': application},)))[0]
            if items:
                secret = ok(call(conn, items[0], ITEM, 'GetSecret', 'o', (session,)))[0]
                assert secret[0] == session and secret[3] == 'text/plain', secret
                result = 'found ' + bytes(secret[2]).decode()
            else:
                key = base64.b64encode(os.urandom(16)).decode()
                properties = {ITEM + '.Label': ('s', 'Chromium Safe Storage'),
                              ITEM + '.Attributes': ('a{ss}', {'application': application,
                                                              'xdg:schema': 'chrome_libsecret_os_crypt_password_v2'})}
                item, prompt = ok(call(conn, collection, COLL, 'CreateItem', 'a{sv}(oayays)b',
                                       (properties, (session, b'', key.encode(), 'text/plain'), False)))
                assert prompt == '/' and item.startswith(LOGIN + '/'), (item, prompt)
                result = 'created ' + key
            ok(call(conn, session, SESS, 'Close'))
            print(result)

        def store_as(name):
            """Stores an item labelled `name` and prints its path."""
            conn = connect()
            print(ok(create(conn, open_plain(conn), name, {'owner': name, 'shared': 'yes'}, name.encode(), replace=False))[0])

        def report(name, paths):
            """What this caller sees: search results, the Items and Collections properties, and
            for each known path (guessed, for most) whether its properties and secret answer."""
            conn = connect()
            session = open_plain(conn)
            labels = lambda found: sorted(ok(call(conn, p, PROPS, 'Get', 'ss', (ITEM, 'Label')))[0][1] for p in found)
            lines = [name + ' search: ' + ' '.join(labels(ok(call(conn, ROOT, SVC, 'SearchItems', 'a{ss}', ({'shared': 'yes'},)))[0]))]
            lines.append(name + ' items: ' + ' '.join(labels(ok(call(conn, ALIAS, PROPS, 'Get', 'ss', (COLL, 'Items')))[0][1])))
            lines.append(name + ' collections: ' + ' '.join(ok(call(conn, ROOT, PROPS, 'Get', 'ss', (SVC, 'Collections')))[0][1]))
            secrets = ok(call(conn, ROOT, SVC, 'GetSecrets', 'aoo', (paths, session)))[0]
            lines.append(name + ' secrets: ' + ' '.join(sorted(bytes(v[2]).decode() for v in secrets.values())))
            for path in paths:
                result = call(conn, path, PROPS, 'GetAll', 's', (ITEM,))
                if result[0] == 'ok':
                    lines.append(name + ' reads ' + result[1][0]['Label'][1])
                else:
                    assert result[1] == 'org.freedesktop.Secret.Error.NoSuchObject', result
                    deleted = call(conn, path, ITEM, 'Delete')
                    assert deleted[1] == 'org.freedesktop.Secret.Error.NoSuchObject', deleted
            print('\n'.join(lines))

        def listen(name, seconds, call_first=True):
            """Prints the collection signals this connection receives for `seconds` (having
            called the service first, or never)."""
            import time
            conn = connect()
            if call_first:
                open_plain(conn)
            rule = MatchRule(type='signal', interface=COLL)
            ok(('ok', conn.send_and_get_reply(message_bus.AddMatch(rule)).body))
            with conn.filter(rule) as queue:
                print('ready', flush=True)
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    try:
                        signal = conn.recv_until_filtered(queue, timeout=max(0.01, deadline - time.monotonic()))
                    except TimeoutError:
                        break
                    print(name + ' heard ' + signal.header.fields[HeaderFields.member], flush=True)
        """#
}
