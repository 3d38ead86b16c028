import KeychainCallers
import KeychainModel
import KeychainTestSupport
@testable import SecretService
import Testing

/// The Secret Service core without a bus or a dbus-daemon: calls in, replies and signals out,
/// over a real keychain file. The real clients' tests (secret-tool, python keyring, libsecret)
/// drive the same core through the sd-bus adapter.
@Suite struct SecretServiceCoreTests {
    static let host = "org.freedesktop.secrets.host"
    static let app = "org.freedesktop.secrets.flatpak.org.example.App"

    /// Who each connection is: two of the host's programs and a sandboxed app.
    final class Peers: BusPeers {
        let scopes: [String: SecretScope] = [":1.1": .test(host), ":1.2": .test(host), ":1.3": .test(app)]
        func scope(of name: String) throws -> SecretScope {
            guard let scope = scopes[name] else { throw BusError.accessDenied("no such connection") }
            return scope
        }
        func isPortal(_ name: String) -> Bool { name == ":1.9" }
    }

    let keychain: TemporaryKeychain
    let peers = Peers()
    let core: SecretServiceCore

    init() throws {
        keychain = try TemporaryKeychain()
        core = SecretServiceCore(store: keychain.store, unlocker: nil) {}
        core.peers = peers
        for name in peers.scopes.keys.sorted() { core.connectionAppeared(name) }
    }

    static let root = "/org/freedesktop/secrets"
    static let service = "org.freedesktop.Secret.Service"

    func call(_ sender: String = ":1.1", _ path: String = root, _ interface: String?, _ member: String, _ arguments: [BusValue] = [])
        -> (reply: BusReply, signals: [BusSignalMessage])
    {
        let response = core.handle(BusCall(sender: sender, path: path, interface: interface, member: member, arguments: arguments))
        return (response.reply, response.signals + core.runAfterReply())
    }

    /// The reply's values; a failed call is recorded.
    func values(_ sender: String = ":1.1", _ path: String = root, _ interface: String?, _ member: String, _ arguments: [BusValue] = []) -> [BusValue] {
        switch call(sender, path, interface, member, arguments).reply {
        case .values(let values, _): return values
        case .error(let error):
            Issue.record("\(member) failed: \(error.name): \(error.message)")
            return []
        }
    }

    func error(_ sender: String = ":1.1", _ path: String = root, _ interface: String?, _ member: String, _ arguments: [BusValue] = []) -> BusError? {
        guard case .error(let error) = call(sender, path, interface, member, arguments).reply else { return nil }
        return error
    }

    func plainSession(_ sender: String = ":1.1") throws -> String {
        try values(sender, Self.root, Self.service, "OpenSession", [.string("plain"), .variant(.string(""))])[1].objectPath()
    }

    func secret(_ text: String, session: String) -> BusValue {
        .structure([.objectPath(session), .bytes(SecretBytes([])), .bytes(SecretBytes(Array(text.utf8))), .string("text/plain")])
    }

    func createItem(_ label: String, in collection: String, sender: String = ":1.1", secret text: String = "s3cret") throws -> String {
        let session = try plainSession(sender)
        let properties = BusValue.properties([
            ("org.freedesktop.Secret.Item.Label", .string(label)), ("org.freedesktop.Secret.Item.Attributes", .attributes(["service": label])),
        ])
        return try values(sender, collection, "org.freedesktop.Secret.Collection", "CreateItem", [properties, secret(text, session: session), .bool(false)])[0]
            .objectPath()
    }

    @Test func aSecretRoundTripsAndOnlyItsScopeHearsOfIt() throws {
        let session = try plainSession()
        let login = Self.root + "/aliases/default"
        let properties = BusValue.properties([("org.freedesktop.Secret.Item.Attributes", .attributes(["user": "alice"]))])
        let (reply, signals) = call(":1.1", login, "org.freedesktop.Secret.Collection", "CreateItem", [properties, secret("hunter2", session: session), .bool(false)])
        guard case .values(let created, let sensitive) = reply else { Issue.record("CreateItem failed: \(reply)"); return }
        #expect(!sensitive)
        let item = try created[0].objectPath()
        #expect(item.hasPrefix(Self.root + "/collection/login/"))
        #expect(signals.map(\.member) == ["ItemCreated", "ItemCreated"])
        #expect(signals.map(\.destination) == [":1.1", ":1.2"], "the host's connections, never the app's")

        let found = values(":1.2", Self.root, Self.service, "SearchItems", [.attributes(["user": "alice"])])
        #expect(try found[0].objectPaths() == [item] && found[1].objectPaths() == [])
        #expect(try values(":1.3", Self.root, Self.service, "SearchItems", [.attributes(["user": "alice"])])[0].objectPaths() == [])

        guard case .values(let got, let gotSensitive) = call(":1.1", item, nil, "GetSecret", [.objectPath(session)]).reply else {
            Issue.record("GetSecret failed")
            return
        }
        #expect(gotSensitive, "the reply carrying a secret is freed zeroed")
        #expect(try got[0].secretStruct().value.isEqual(to: SecretBytes(Array("hunter2".utf8))))
        #expect(error(":1.3", item, nil, "GetSecret", [.objectPath(try plainSession(":1.3"))])?.name == "org.freedesktop.Secret.Error.NoSuchObject")
        #expect(error(":1.2", item, nil, "GetSecret", [.objectPath(session)])?.name == "org.freedesktop.Secret.Error.NoSession", "sessions are a connection's own")
    }

    @Test func aCarelessClientsScratchCollectionDeletesOnlyItsOwnItems() throws {
        let login = Self.root + "/collection/login"
        let kept = try createItem("kept", in: login)
        let created = values(":1.1", Self.root, Self.service, "CreateCollection", [.properties([("org.freedesktop.Secret.Collection.Label", .string("Scratch"))]), .string("")])
        let scratch = try created[0].objectPath()
        #expect(try created[1].objectPath() == "/", "a scope makes its own collections without a prompt")
        let doomed = try createItem("doomed", in: scratch)
        let theirs = try createItem("theirs", in: login, sender: ":1.3")

        let (reply, signals) = call(":1.1", scratch, nil, "Delete")
        guard case .values(let prompt, _) = reply else { Issue.record("Delete failed"); return }
        #expect(try prompt[0].objectPath() == "/")
        #expect(signals.contains { $0.member == "CollectionDeleted" && $0.destination == ":1.2" })
        #expect(!signals.contains { $0.destination == ":1.3" })
        #expect(error(":1.1", doomed, nil, "Delete")?.name == "org.freedesktop.Secret.Error.NoSuchObject")
        let session = try plainSession()
        #expect(try values(":1.1", kept, nil, "GetSecret", [.objectPath(session)])[0].secretStruct().value.count == 6)
        #expect(try values(":1.3", theirs, nil, "GetSecret", [.objectPath(try plainSession(":1.3"))])[0].secretStruct().value.count == 6)
    }

    @Test func deletingTheLoginCollectionWaitsForTheUser() throws {
        let login = Self.root + "/collection/login"
        let kept = try createItem("kept", in: login)
        let prompt = try values(":1.1", login, nil, "Delete")[0].objectPath()
        #expect(prompt.hasPrefix(Self.root + "/prompt/"))
        #expect(error(":1.2", prompt, nil, "Prompt", [.string("")])?.name == "org.freedesktop.DBus.Error.UnknownObject", "a prompt is its connection's")
        // No one can be asked here: the prompt is dismissed and nothing is deleted.
        let (reply, signals) = call(":1.1", prompt, nil, "Prompt", [.string("")])
        guard case .values = reply else { Issue.record("Prompt failed"); return }
        guard let completed = signals.first, case .bool(true) = completed.values[0] else { Issue.record("no dismissed Completed: \(signals)"); return }
        #expect(completed.member == "Completed" && completed.destination == ":1.1" && completed.path == prompt)
        #expect(try values(":1.1", kept, nil, "GetSecret", [.objectPath(try plainSession())])[0].secretStruct().value.count == 6)
    }

    @Test func introspectionIsGeneratedFromTheTables() throws {
        let xml = try values(":1.1", Self.root, "org.freedesktop.DBus.Introspectable", "Introspect")[0].string()
        #expect(xml.contains(#"<method name="OpenSession"><arg name="algorithm" type="s" direction="in"/><arg name="input" type="v" direction="in"/>"#))
        #expect(xml.contains(#"<property name="Collections" type="ao" access="read"/>"#))
        #expect(xml.contains(#"<signal name="CollectionCreated"><arg name="collection" type="o"/></signal>"#))
        #expect(xml.contains(#"<node name="collection"/>"#) && xml.contains(#"<node name="aliases"/>"#))
        for method in SecretServiceCore.serviceInterface.methods { #expect(xml.contains("<method name=\"\(method.name)\"")) }
        let above = try values(":1.1", "/org", nil, "Introspect")[0].string()
        #expect(above.contains(#"<node name="freedesktop"/>"#))
        #expect(error(":1.1", "/elsewhere", nil, "Introspect")?.name == "org.freedesktop.Secret.Error.NoSuchObject")
    }

    @Test func everyMethodOfEveryTableIsRoutedAndChecked() throws {
        let item = try createItem("probe", in: Self.root + "/collection/login")
        let session = try plainSession()
        let prompt = try values(":1.1", Self.root + "/collection/login", nil, "Delete")[0].objectPath()
        let objects: [(String, [BusInterface])] = [
            (Self.root, [SecretServiceCore.serviceInterface]), (Self.root + "/collection/login", [SecretServiceCore.collectionInterface]),
            (item, [SecretServiceCore.itemInterface]), (session, [SecretServiceCore.sessionInterface]), (prompt, [SecretServiceCore.promptInterface]),
        ]
        for (path, own) in objects {
            for interface in SecretServiceCore.standardInterfaces + own {
                for method in interface.methods {
                    // One argument too many: refused by the table's signature, before the handler.
                    let refused = error(":1.1", path, interface.name, method.name, Array(repeating: .uint32(7), count: method.inputs.count + 1))
                    #expect(refused?.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(interface.name).\(method.name) at \(path)")
                    #expect(refused?.message.contains("takes (\(method.inputSignature))") == true, "\(refused?.message ?? "")")
                }
            }
        }
        #expect(error(":1.1", Self.root, Self.service, "Teleport")?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(error(":1.1", Self.root, "org.example.Nothing", "OpenSession")?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(error(":1.1", Self.root, nil, "SearchItems", [.attributes([:])]) == nil, "a call without an interface finds its method")
    }

    @Test func propertiesAreReadAndWrittenPerScope() throws {
        let login = Self.root + "/collection/login"
        let (reply, signals) = call(":1.1", login, "org.freedesktop.DBus.Properties", "Set", [
            .string("org.freedesktop.Secret.Collection"), .string("Label"), .variant(.string("Mine")),
        ])
        guard case .values = reply else { Issue.record("Set failed: \(reply)"); return }
        #expect(signals.map(\.member) == ["PropertiesChanged", "PropertiesChanged", "CollectionChanged", "CollectionChanged"])
        let label = values(":1.2", login, nil, "Get", [.string("org.freedesktop.Secret.Collection"), .string("Label")])
        #expect(try label[0].variantContents().string() == "Mine")
        let theirs = values(":1.3", login, nil, "Get", [.string("org.freedesktop.Secret.Collection"), .string("Label")])
        #expect(try theirs[0].variantContents().string() == "Login", "another scope's login collection is its own")
        #expect(error(":1.1", login, nil, "Set", [.string("org.freedesktop.Secret.Collection"), .string("Locked"), .variant(.bool(false))])?.name
            == "org.freedesktop.DBus.Error.PropertyReadOnly")
        #expect(error(":1.1", login, nil, "Get", [.string("org.freedesktop.Secret.Collection"), .string("Colour")])?.name
            == "org.freedesktop.DBus.Error.UnknownProperty")
    }

    @Test func onlyThePortalRetrievesAnAppsSecret() throws {
        let portal = "/org/freedesktop/portal/desktop"
        let arguments: [BusValue] = [.objectPath("/r/1"), .string("org.example.App"), .unixFD(-1), .properties([])]
        #expect(error(":1.1", portal, "org.freedesktop.impl.portal.Secret", "RetrieveSecret", arguments)?.name == "org.freedesktop.DBus.Error.AccessDenied")
        let answered = values(":1.9", portal, "org.freedesktop.impl.portal.Secret", "RetrieveSecret", arguments)
        guard case .uint32(let response)? = answered.first else { Issue.record("no response"); return }
        #expect(response == 2, "the secret cannot be written to a closed descriptor: failed, and said so")
        #expect(try values(":1.1", portal, nil, "Get", [.string("org.freedesktop.impl.portal.Secret"), .string("version")])[0].variantContents().signature == "u")
    }

    @Test func aConnectionThatCannotBePlacedIsRefused() {
        #expect(error(":1.7", Self.root, Self.service, "SearchItems", [.attributes([:])])?.name == "org.freedesktop.DBus.Error.AccessDenied")
    }
}
