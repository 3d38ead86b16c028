/// One D-Bus interface as a table: each method with its arguments and its handler, the
/// properties and signals it declares. The table is the only declaration: introspection,
/// routing and the check of each call's signature all read it.
struct BusInterface: Sendable {
    let name: String
    let methods: [BusMethod]
    let properties: [BusProperty]
    let signals: [BusSignal]
    private let byName: [String: BusMethod]

    init(_ name: String, methods: [BusMethod], properties: [BusProperty] = [], signals: [BusSignal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        byName = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func method(_ member: String) -> BusMethod? { byName[member] }

    /// Its `<interface>` element of the introspection data.
    var introspection: String {
        var xml = " <interface name=\"\(name)\">\n"
        for method in methods {
            let arguments = method.inputs.map { $0.xml(direction: "in") } + method.outputs.map { $0.xml(direction: "out") }
            xml += arguments.isEmpty ? "  <method name=\"\(method.name)\"/>\n" : "  <method name=\"\(method.name)\">\(arguments.joined())</method>\n"
        }
        for property in properties {
            xml += "  <property name=\"\(property.name)\" type=\"\(property.type)\" access=\"\(property.writable ? "readwrite" : "read")\"/>\n"
        }
        for signal in signals {
            xml += "  <signal name=\"\(signal.name)\">\(signal.arguments.map { $0.xml(direction: nil) }.joined())</signal>\n"
        }
        return xml + " </interface>\n"
    }
}

/// A named argument of a method or signal.
struct BusArgument: Sendable {
    let name: String
    let type: String

    func xml(direction: String?) -> String {
        "<arg name=\"\(name)\" type=\"\(type)\"\(direction.map { " direction=\"\($0)\"" } ?? "")/>"
    }
}

/// A method: its arguments, and what serves it. The handler gets the call once its
/// arguments' signature is the method's.
struct BusMethod: Sendable {
    typealias Handler = @Sendable (SecretServiceCore, BusInvocation) throws -> [BusValue]

    let name: String
    let inputs: [BusArgument]
    let outputs: [BusArgument]
    /// Whether its reply carries a secret (the adapter has it freed zeroed).
    let sensitiveReply: Bool
    /// Whether the signals of a change go out before the reply (a deleted collection, a
    /// lock, a property set: the order the service had before the core was split out; a
    /// dbus-daemon routing them after the reply makes the caller's next call wait, which
    /// keychain-bench's scratch collection showed).
    let signalsFirst: Bool
    let handler: Handler

    /// - Parameters: `in` and `out` as (name, type) pairs, in order.
    init(
        _ name: String, in inputs: KeyValuePairs<String, String> = [:], out outputs: KeyValuePairs<String, String> = [:],
        sensitiveReply: Bool = false, signalsFirst: Bool = false, _ handler: @escaping Handler
    ) {
        self.name = name
        self.inputs = inputs.map { BusArgument(name: $0.key, type: $0.value) }
        self.outputs = outputs.map { BusArgument(name: $0.key, type: $0.value) }
        self.sensitiveReply = sensitiveReply
        self.signalsFirst = signalsFirst
        self.handler = handler
        inputSignature = self.inputs.map(\.type).joined()
    }

    /// What a call's arguments must be.
    let inputSignature: String
}

struct BusProperty: Sendable {
    let name: String
    let type: String
    var writable = false
}

struct BusSignal: Sendable {
    let name: String
    let arguments: [BusArgument]

    init(_ name: String, _ arguments: KeyValuePairs<String, String>) {
        self.name = name
        self.arguments = arguments.map { BusArgument(name: $0.key, type: $0.value) }
    }
}

/// One method call being served: who sent it, to which object, with which arguments.
struct BusInvocation {
    let call: BusCall
    /// The object the path names (checked to exist for the caller, but for GetSecret).
    let object: SecretObjectPath
    /// The caller's connection; none on the portal's object, whose one caller is the portal.
    let connection: SecretServiceCore.Connection?
    var arguments: [BusValue] { call.arguments }

    var caller: SecretServiceCore.Connection {
        get throws {
            guard let connection else { throw BusError.failed("no connection for this object") }
            return connection
        }
    }
}

/// A method call as the adapter delivers it.
struct BusCall {
    let sender: String
    let path: String
    let interface: String?
    let member: String
    let arguments: [BusValue]

    var signature: String { arguments.map(\.signature).joined() }
}

/// What the core answers a call with.
enum BusReply {
    case values([BusValue], sensitive: Bool)
    case error(BusError)
}

/// A call's outcome: its reply, and the signals to send with it.
struct BusResponse {
    let reply: BusReply
    let signals: [BusSignalMessage]
    /// Whether the signals go before the reply (``BusMethod/signalsFirst``).
    var signalsFirst = false
}
