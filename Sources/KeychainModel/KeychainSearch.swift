/// One item request across several keychains, answered as macOS answers a search list:
/// the keychains in order; a search for one match ends at the first keychain that has
/// one, a search for several collects every match up to the limit; a change applies to
/// every keychain, and errSecItemNotFound only when none had a match.
///
/// The one place this is decided: securityd merges its login and file keychains with it,
/// and a client the user's keychains with the System keychain's daemon (which must see the
/// caller itself, so a client asks it directly).
public struct KeychainSearch {
    public let limit: ItemQuery.MatchLimit
    private var found: [KeychainValue] = []
    private var first: KeychainValue??

    public init(limit: ItemQuery.MatchLimit) {
        self.limit = limit
    }

    /// The search a query asks for; a limit securityd would refuse is searched as one
    /// match (the first keychain asked refuses it).
    public init(query: [String: KeychainValue]) {
        self.init(limit: query[QueryKey.matchLimit].flatMap { try? ItemQuery.MatchLimit($0) } ?? .one)
    }

    /// Adds the next keychain's answer; false once the search is complete.
    public mutating func add(_ result: KeychainValue?) -> Bool {
        guard limit.returnsArray else {
            first = .some(result)
            return false
        }
        if case .array(let items)? = result { found += items }
        return limit.maximum.map { found.count < $0 } ?? true
    }

    /// The merged answer.
    ///
    /// - Throws: errSecItemNotFound when no keychain had a match.
    public func result() throws(KeychainError) -> KeychainValue? {
        if let first { return first }
        guard !found.isEmpty else { throw KeychainError(status: OSStatusCode.itemNotFound, message: "no item matches in the keychains searched") }
        return .array(Array(found.prefix(limit.maximum ?? found.count)))
    }

    /// Searches `keychains` in order with `search`, passing over those without a match.
    public mutating func run<Keychain, Failure: Error>(
        _ keychains: [Keychain], _ search: (Keychain) throws(Failure) -> KeychainValue?
    ) throws(Failure) {
        for keychain in keychains {
            do {
                guard add(try search(keychain)) else { return }
            } catch where (error as? KeychainError)?.status == OSStatusCode.itemNotFound {
                continue
            }
        }
    }

    /// Runs `change` on every keychain; errSecItemNotFound only when none had a match.
    public static func changeEach<Keychain, Failure: Error>(
        _ keychains: [Keychain], _ change: (Keychain) throws(Failure) -> Void
    ) throws(Failure) {
        var notFound: Failure?
        var changed = false
        for keychain in keychains {
            do {
                try change(keychain)
                changed = true
            } catch where (error as? KeychainError)?.status == OSStatusCode.itemNotFound {
                notFound = error
            }
        }
        if !changed, let notFound { throw notFound }
    }
}
