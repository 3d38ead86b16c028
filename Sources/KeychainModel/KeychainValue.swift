public import FoundationEssentials

/// A value in a keychain query or result: the property-list subset that `SecItem`
/// dictionaries carry (CFString, CFData, CFNumber, CFDate, CFBoolean, CFArray, CFDictionary).
public enum KeychainValue: Sendable, Hashable {
    case string(String)
    case data(Data)
    case number(Int64)
    case date(Date)
    case bool(Bool)
    case array([KeychainValue])
    case dictionary([String: KeychainValue])
}

extension KeychainValue {
    /// A short name of the value's type for error messages; never the value itself.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .data: "data"
        case .number: "number"
        case .date: "date"
        case .bool: "boolean"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// The boolean a CFBoolean or CFNumber stands for, as CoreFoundation reads them.
    public var boolValue: Bool? {
        switch self {
        case .bool(let b): b
        case .number(let n): n != 0
        default: nil
        }
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var dataValue: Data? {
        if case .data(let d) = self { return d }
        return nil
    }

    public var numberValue: Int64? {
        if case .number(let n) = self { return n }
        return nil
    }

    public var dateValue: Date? {
        if case .date(let d) = self { return d }
        return nil
    }
}
