/// A random number generator; only the default (the system's) exists.
public typealias SecRandomRef = AnyObject

/// The default random number generator.
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes (Swift's system
/// generator: `getrandom(2)`).
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    var generator = SystemRandomNumberGenerator()
    let buffer = UnsafeMutableRawBufferPointer(start: bytes, count: count)
    var index = 0
    while index < count {
        var word = generator.next()
        let chunk = min(8, count - index)
        withUnsafeBytes(of: &word) { buffer[index..<index + chunk].copyBytes(from: $0.prefix(chunk)) }
        index += chunk
    }
    return errSecSuccess
}
