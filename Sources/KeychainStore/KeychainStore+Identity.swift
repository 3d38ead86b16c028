import FoundationEssentials
import GRDB
import KeychainModel

/// A certificate joined with its private key (`cert.pkhh == keys.klbl`, `keys.kcls` private).
struct IdentityMatch {
    let certificate: Match
    let key: Match

    /// The identity as one item: the key's attributes overlaid with the certificate's, the
    /// certificate's data and persistent reference, class `idnt`.
    var item: KeychainItem {
        var item = certificate.item
        item.itemClass = .identity
        item.attributes = key.item.attributes.merging(certificate.item.attributes) { _, certificate in certificate }
        return item
    }
}

extension KeychainStore {
    /// The identities matching `criteria`, whose attributes may be a certificate's or a key's.
    ///
    /// - Throws: `errSecItemNotFound` when there are none.
    func identities(_ criteria: SearchCriteria, in db: Database, limit: Int?, withData: Bool, keys: OperationKeys) throws -> [IdentityMatch] {
        var certificateAttributes: [String: KeychainValue] = [:]
        var keyAttributes: [String: KeychainValue] = [:]
        for (name, value) in criteria.attributes {
            if ItemSchema.identityAttribute(named: name)?.0 == .certificate {
                certificateAttributes[name] = value
            } else {
                keyAttributes[name] = value
            }
        }
        keyAttributes["kcls"] = .number(ItemSchema.keyClassPrivate)

        var found: [IdentityMatch] = []
        var skippedUnreadable = false
        let certificates = try search(
            criteria.narrowed(to: .certificate, attributes: certificateAttributes), in: db, limit: nil, withData: withData, keys: keys)
        skippedUnreadable = certificates.skippedUnreadable
        for certificate in certificates.matches {
            guard let publicKeyHash = certificate.item.attributes["pkhh"] else { continue }
            var keyCriteria = criteria.narrowed(to: .key, attributes: keyAttributes)
            keyCriteria.attributes["klbl"] = publicKeyHash
            let keyMatches = try search(keyCriteria, in: db, limit: 1, withData: false, keys: keys)
            skippedUnreadable = skippedUnreadable || keyMatches.skippedUnreadable
            if let key = keyMatches.matches.first {
                found.append(IdentityMatch(certificate: certificate, key: key))
                if let limit, found.count >= limit { break }
            }
        }
        if found.isEmpty {
            throw skippedUnreadable ? KeychainError.decode : KeychainError.itemNotFound
        }
        return found
    }
}
