import CSystemd
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The smallest Secret Service client, over libsystemd's sd-bus: the calls a lookup makes
/// (`SearchItems`, then `Item.GetSecret` in a plain session), the ones a fill makes
/// (`OpenSession`, `CreateItem`), and `Peer.Ping` for the floor. The same client measures
/// every provider. One connection; used by one thread at a time.
final class SecretServiceClient {
    private let bus: OpaquePointer
    /// The provider's unique name: calls go to the connection that owns the name now.
    let provider: String
    private(set) var session = "/"

    static let service = "org.freedesktop.secrets"
    static let defaultCollection = "/org/freedesktop/secrets/aliases/default"
    /// gnome-keyring's session collection, kept in memory only for the login session.
    static let sessionCollection = "/org/freedesktop/secrets/collection/session"

    init(address: String) throws {
        var bus: OpaquePointer?
        let opened = trousseau_bus_open(address, 0, &bus)
        guard opened >= 0, let bus else { throw BenchError("cannot connect to \(address): \(String(cString: strerror(-opened)))") }
        let owner: String
        do {
            owner = try Self.owner(bus)
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
        self.bus = bus
        provider = owner
        session = try openPlainSession()
    }

    deinit {
        sd_bus_flush_close_unref(bus)
    }

    /// Who owns org.freedesktop.secrets, or nil when no one does.
    static func owner(address: String) -> String? {
        var bus: OpaquePointer?
        guard trousseau_bus_open(address, 0, &bus) >= 0, let bus else { return nil }
        defer { sd_bus_flush_close_unref(bus) }
        return try? owner(bus)
    }

    private static func owner(_ bus: OpaquePointer) throws -> String {
        let reply = try call(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner") { message in
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), service), "a name")
        }
        defer { sd_bus_message_unref(reply) }
        return try readString(reply, "s")
    }

    // MARK: - The calls

    /// A round trip to the provider through the bus that the provider's bus library answers
    /// itself (`org.freedesktop.DBus.Peer.Ping`): the floor of every call.
    func ping() throws {
        sd_bus_message_unref(try Self.call(bus, provider, "/", "org.freedesktop.DBus.Peer", "Ping") { _ in })
    }

    /// A round trip to the bus daemon alone (`GetId`): half the hops of a call to a provider.
    func pingBus() throws {
        sd_bus_message_unref(try Self.call(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId") { _ in })
    }

    private func openPlainSession() throws -> String {
        let reply = try Self.call(bus, provider, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession") { message in
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), "plain"), "the algorithm")
            try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s"), "a variant")
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), ""), "the input")
            try Self.check(sd_bus_message_close_container(message), "a variant")
        }
        defer { sd_bus_message_unref(reply) }
        try Self.check(sd_bus_message_skip(reply, "v"), "the output")
        return try Self.readString(reply, "o")
    }

    /// `Collection.CreateItem` in the default collection, replacing an item of the same
    /// attributes unless `replace` is false; returns its path.
    @discardableResult
    func createItem(
        in collection: String = defaultCollection, label: String, attributes: [String: String], secret: [UInt8], replace: Bool = true
    ) throws -> String {
        let session = self.session
        let reply = try Self.call(bus, provider, collection, "org.freedesktop.Secret.Collection", "CreateItem") { message in
            try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}"), "properties")
            try Self.appendProperty(message, "org.freedesktop.Secret.Item.Label") { message in
                try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s"), "a variant")
                try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), label), "the label")
                try Self.check(sd_bus_message_close_container(message), "a variant")
            }
            try Self.appendProperty(message, "org.freedesktop.Secret.Item.Attributes") { message in
                try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "a{ss}"), "a variant")
                try Self.appendAttributes(message, attributes)
                try Self.check(sd_bus_message_close_container(message), "a variant")
            }
            try Self.check(sd_bus_message_close_container(message), "properties")
            try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "r")), "oayays"), "the secret")
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), session), "the session")
            try Self.check(sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), nil, 0), "the parameters")
            try Self.check(secret.withUnsafeBytes { sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count) }, "the value")
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), "text/plain"), "the content type")
            try Self.check(sd_bus_message_close_container(message), "the secret")
            var replacing: Int32 = replace ? 1 : 0
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &replacing), "replace")
        }
        defer { sd_bus_message_unref(reply) }
        let item = try Self.readString(reply, "o")
        guard try Self.readString(reply, "o") == "/" else { throw BenchError("CreateItem asked for a prompt") }
        return item
    }

    /// `Service.CreateCollection` labelled `label`, no alias: its path (a prompt is an error).
    func createCollection(label: String) throws -> String {
        let reply = try Self.call(bus, provider, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "CreateCollection") { message in
            try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}"), "properties")
            try Self.appendProperty(message, "org.freedesktop.Secret.Collection.Label") { message in
                try Self.check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s"), "a variant")
                try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), label), "the label")
                try Self.check(sd_bus_message_close_container(message), "a variant")
            }
            try Self.check(sd_bus_message_close_container(message), "properties")
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), ""), "the alias")
        }
        defer { sd_bus_message_unref(reply) }
        let collection = try Self.readString(reply, "o")
        guard try Self.readString(reply, "o") == "/" else { throw BenchError("CreateCollection asked for a prompt") }
        return collection
    }

    /// `Collection.Delete` (a prompt is an error).
    func deleteCollection(_ collection: String) throws {
        let reply = try Self.call(bus, provider, collection, "org.freedesktop.Secret.Collection", "Delete") { _ in }
        defer { sd_bus_message_unref(reply) }
        guard try Self.readString(reply, "o") == "/" else { throw BenchError("Delete of \(collection) asked for a prompt") }
    }

    /// `Service.SearchItems`: the unlocked items whose attributes include `attributes`.
    func searchItems(_ attributes: [String: String]) throws -> [String] {
        let reply = try Self.call(bus, provider, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "SearchItems") { message in
            try Self.appendAttributes(message, attributes)
        }
        defer { sd_bus_message_unref(reply) }
        try Self.check(sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "a")), "o"), "the unlocked items")
        var items: [String] = []
        while sd_bus_message_at_end(reply, 0) == 0 { items.append(try Self.readString(reply, "o")) }
        return items
    }

    /// `Properties.Get` of a collection's `Locked`, which python's keyring asks before
    /// every call.
    func isLocked(_ collection: String = defaultCollection) throws -> Bool {
        let reply = try Self.call(bus, provider, collection, "org.freedesktop.DBus.Properties", "Get") { message in
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), "org.freedesktop.Secret.Collection"), "the interface")
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), "Locked"), "the property")
        }
        defer { sd_bus_message_unref(reply) }
        try Self.check(sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "b"), "the value")
        var locked: Int32 = 0
        try Self.check(sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "b")), &locked), "Locked")
        return locked != 0
    }

    /// `Item.GetSecret` in the plain session: the secret's bytes.
    func secret(of item: String) throws -> [UInt8] {
        let session = self.session
        let reply = try Self.call(bus, provider, item, "org.freedesktop.Secret.Item", "GetSecret") { message in
            try Self.check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), session), "the session")
        }
        defer { sd_bus_message_unref(reply) }
        try Self.check(sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "r")), "oayays"), "the secret")
        try Self.check(sd_bus_message_skip(reply, "oay"), "the secret's session")
        var pointer: UnsafeRawPointer?
        var size = 0
        try Self.check(sd_bus_message_read_array(reply, CChar(UInt8(ascii: "y")), &pointer, &size), "the value")
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    // MARK: - sd-bus

    private static func call(
        _ bus: OpaquePointer, _ destination: String, _ path: String, _ interface: String, _ member: String,
        _ append: (OpaquePointer) throws -> Void
    ) throws -> OpaquePointer {
        var message: OpaquePointer?
        try check(sd_bus_message_new_method_call(bus, &message, destination, path, interface, member), "\(member)")
        guard let message else { throw BenchError("no message") }
        defer { sd_bus_message_unref(message) }
        try append(message)
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let result = sd_bus_call(bus, message, 30_000_000, &error, &reply)
        guard result >= 0, let reply else {
            let name = error.name.map { String(cString: $0) } ?? String(cString: strerror(-result))
            let text = error.message.map { String(cString: $0) } ?? ""
            throw BenchError("\(interface).\(member): \(name) \(text)")
        }
        return reply
    }

    private static func appendProperty(_ message: OpaquePointer, _ name: String, _ value: (OpaquePointer) throws -> Void) throws {
        try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv"), "a property")
        try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), name), "a property's name")
        try value(message)
        try check(sd_bus_message_close_container(message), "a property")
    }

    private static func appendAttributes(_ message: OpaquePointer, _ attributes: [String: String]) throws {
        try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{ss}"), "attributes")
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "ss"), "an attribute")
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), name), "an attribute's name")
            try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), value), "an attribute's value")
            try check(sd_bus_message_close_container(message), "an attribute")
        }
        try check(sd_bus_message_close_container(message), "attributes")
    }

    private static func readString(_ message: OpaquePointer, _ type: Character) throws -> String {
        var pointer: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, CChar(type.asciiValue!), &pointer), "a \(type)")
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func check(_ result: Int32, _ what: String) throws {
        guard result >= 0 else { throw BenchError("sd-bus: \(what): \(String(cString: strerror(-result)))") }
    }
}
