import FoundationEssentials
@testable import KeychainModel
import Testing

@Suite struct ItemQueryTests {
    /// A query's keys are parsed as attributes when they have no option's prefix: every
    /// attribute a caller may name must be taken as one and no option key may be, or an
    /// option added without a prefix would be refused as an unknown attribute. (Internal
    /// attributes are refused either way; two of them, `accc` and `v_pk`, are not taken as
    /// attributes at all: the first is the access-control option, the second a `v_` key.)
    @Test func everyAttributeAndNoOptionIsAnAttributeName() {
        for itemClass in ItemClass.allCases {
            for attribute in ItemSchema.of(itemClass).attributes where attribute.access != .internal {
                #expect(ItemQuery.isAttributeName(attribute.name), "\(itemClass.rawValue).\(attribute.name)")
            }
        }
        // Every option Apple names (kSecMatch…, kSecReturn…, kSecValue…, kSecUse…, the class
        // and the access control; their values as well, harmlessly), and this keychain's own.
        let apple = SecName.all.filter { name, _ in
            ["kSecMatch", "kSecReturn", "kSecValue", "kSecUse"].contains { name.hasPrefix($0) }
                || name == "kSecClass" || name == "kSecAttrAccessControl"
        }.map(\.value)
        let options = apple + [QueryKey.useTombstones] + QueryKey.unimplementedMatchOptions
        #expect(options.count > 30)
        for option in options {
            #expect(!ItemQuery.isAttributeName(option), "\(option)")
        }
    }

    @Test func parsesLimitsReturnsAndSync() throws {
        let query = try ItemQuery(
            ["class": .string("genp"), "acct": .string("a"), "m_Limit": .string("m_LimitAll"), "r_Data": .bool(true),
             "r_Attributes": .number(1), "sync": .string("syna"), "pdmn": .string("cku"), "agrp": .string("g")],
            for: .copyMatching)
        #expect(query.itemClass == .genericPassword)
        #expect(query.limit == .all)
        #expect(query.returnTypes == [.data, .attributes])
        #expect(query.synchronizable == .any)
        #expect(query.protection == .afterFirstUnlockThisDeviceOnly)
        #expect(query.accessGroup == "g")
        #expect(query.attributes == ["acct": .string("a")])
    }

    @Test func deleteAlwaysMatchesAll() throws {
        let query = try ItemQuery(["class": .string("genp"), "m_Limit": .string("m_LimitAll")], for: .delete)
        #expect(query.limit == .all)
        #expect(try ItemQuery(["class": .string("genp")], for: .delete).limit == .all)
    }

    @Test func falseReturnFlagsAreNotRequests() throws {
        let query = try ItemQuery(["class": .string("genp"), "r_Data": .bool(false)], for: .copyMatching)
        #expect(query.returnTypes.isEmpty)
    }

    @Test func coercions() throws {
        let schema = ItemSchema.of(.key)
        let kcls = try #require(schema.attribute(named: "kcls"))
        #expect(try kcls.coerce(.string("1")) == .number(1))
        #expect(try kcls.coerce(.bool(true)) == .number(1))
        #expect(throws: KeychainError.param) { try kcls.coerce(.string("private")) }
        let atag = try #require(schema.attribute(named: "atag"))
        #expect(try atag.coerce(.string("tag")) == .data(Data("tag".utf8)))
        let sign = try #require(schema.attribute(named: "sign"))
        #expect(try sign.coerce(.number(0)) == .bool(false))
        #expect(throws: KeychainError.param) { try sign.coerce(.string("true")) }
    }

    @Test func primaryKeysMatchApplesSchema() {
        func names(_ c: ItemClass) -> Set<String> { Set(ItemSchema.of(c).primaryKey.map(\.name)) }
        #expect(names(.genericPassword) == ["acct", "svce", "agrp", "sync"])
        #expect(names(.internetPassword) == ["acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path", "agrp", "sync"])
        #expect(names(.certificate) == ["ctyp", "issr", "slnr", "agrp", "sync"])
        #expect(names(.key) == ["kcls", "klbl", "atag", "crtr", "type", "bsiz", "esiz", "sdat", "edat", "agrp", "sync"])
    }

    @Test func persistentReferenceRoundTrip() throws {
        let reference = PersistentReference(itemClass: .internetPassword, uuid: UUID())
        #expect(reference.data.count == 20)
        #expect(try PersistentReference(data: reference.data) == reference)
        #expect(throws: KeychainError.param) { try PersistentReference(data: Data("idnt".utf8) + Data(count: 16)) }
    }

    @Test func errorsCompareOnStatusOnly() {
        #expect(KeychainError(status: OSStatusCode(rawValue: -25300), message: "one thing") == KeychainError.itemNotFound)
        #expect(KeychainError.param("x") != KeychainError.decode("x"))
        #expect(KeychainError.itemNotFound.description == "The specified item could not be found in the keychain. (OSStatus -25300)")
    }
}
