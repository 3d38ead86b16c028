public import KeychainModel

/// The frames between clients and securityd, inside `FrameIO`'s length prefix, as
/// ``WireProtocol`` lays them out; request headers carry the user's presence.
public enum ServiceWire: WireProtocol {
    /// 3: every message in ``WireEncoder``'s form (2 had a codec per request; 1 nested the
    /// user's presence as a request).
    public static let version: UInt8 = 3
    /// The largest frame either side accepts: a 1 MiB secret and its attributes.
    public static let maximumFrameSize = 2 << 20
    public static var catalog: MessageCatalog { ServiceCatalog.catalog }
    public static let carriesPresence = true
}
