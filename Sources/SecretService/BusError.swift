/// A D-Bus error reply: its name (one the Secret Service or D-Bus specification names) and
/// a message for people. Never carries a secret.
struct BusError: Error {
    let name: String
    let message: String

    static func invalidArgs(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message) }
    static func notSupported(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.NotSupported", message: message) }
    static func noSuchObject(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "No such object: \(path)")
    }
    static func noSession(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.Secret.Error.NoSession", message: "No session \(path) of this connection")
    }
    static func isLocked(_ message: String) -> BusError { BusError(name: "org.freedesktop.Secret.Error.IsLocked", message: message) }
    static func unknownMethod(_ interface: String, _ member: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "No method \(member) in interface \(interface) here")
    }
    static func unknownObject(_ path: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "No object at path \(path)")
    }
    static func failed(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.Failed", message: message) }
    static func accessDenied(_ message: String) -> BusError { BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message) }
    static func propertyReadOnly(_ name: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "Property \(name) is read-only")
    }
    static func unknownProperty(_ name: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "No property \(name) here")
    }
}
