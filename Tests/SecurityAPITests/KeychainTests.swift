import Foundation
import KeychainClient
import KeychainModel
import KeychainTestSupport
import Testing

// The typed Swift API (KeychainClient.Keychain) that the Security module is built on, against
// the same real daemon.

extension SecurityAPI {
    @Suite struct KeychainTests {
        let keychain = Keychain(
            paths: SecurityAPI.sharedKeychain.paths,
            daemonEnvironment: CommandRunner.testEnvironment.merging(["TROUSSEAU_SECURITYD_LOG": SecurityAPI.sharedKeychain.log]) { $1 })
        let service = "com.example.typed." + UUID().uuidString

        @Test func setReadUpdateDelete() throws {
            let alice = GenericPassword(service: service, account: "alice")
            #expect(try keychain.secret(for: alice) == nil, "not found is nil, not an error")
            try keychain.set(Data("one".utf8), for: alice, attributes: ItemAttributes(label: "Alice", protection: .afterFirstUnlock))
            #expect(try keychain.secret(for: alice) == Data("one".utf8))
            try keychain.set(Data("two".utf8), for: alice)
            #expect(try keychain.secret(for: alice) == Data("two".utf8), "set replaces the secret of an item that exists")

            #expect(throws: KeychainError.duplicateItem) { try keychain.add(Data("three".utf8), for: alice) }
            try keychain.update(alice, attributes: ItemAttributes(comment: "changed"))
            let stored = try #require(try keychain.attributes(of: alice))
            #expect(stored.item == alice)
            #expect(stored.attributes.label == "Alice" && stored.attributes.comment == "changed")
            #expect(stored.attributes.protection == .afterFirstUnlock)
            #expect(stored.attributes.accessGroup?.hasPrefix("unsigned.") == true)
            #expect(stored.creationDate != nil && stored.persistentReference?.count == 20)

            #expect(try keychain.delete(alice))
            #expect(try keychain.delete(alice) == false, "deleting what is not there is false, not an error")
            #expect(throws: KeychainError.itemNotFound) { try keychain.update(alice, secret: Data()) }
        }

        @Test func listsAndSynchronizableItems() throws {
            try keychain.add(Data("l".utf8), for: GenericPassword(service: service, account: "local"))
            try keychain.add(Data("s".utf8), for: GenericPassword(service: service, account: "synced"), attributes: ItemAttributes(synchronizable: true))
            let items = try keychain.items(GenericPassword.self, matching: ["svce": .string(service)])
            #expect(items.map(\.item.account).sorted() == ["local", "synced"])
            #expect(items.first { $0.item.account == "synced" }?.attributes.synchronizable == true)
            #expect(try keychain.secret(for: GenericPassword(service: service, account: "synced")) == Data("s".utf8))

            let server = InternetPassword(server: service, account: "bob", protocol: .https, port: 8443, authenticationType: .htmlForm)
            try keychain.add(Data("pw".utf8), for: server)
            let found = try keychain.items(InternetPassword.self, matching: ["srvr": .string(service)])
            #expect(found.map(\.item) == [InternetPassword(server: service, account: "bob", protocol: .https, port: 8443, path: "", authenticationType: .htmlForm, securityDomain: "")])
            #expect(try keychain.secret(for: InternetPassword(server: service, account: "bob")) == Data("pw".utf8), "unset parts match any")
            try keychain.deleteAll(InternetPassword.self)
            #expect(try keychain.items(InternetPassword.self).isEmpty)
        }

        @Test func errorsCarryApplesStatus() {
            let item = GenericPassword(service: service, account: "x")
            #expect(throws: KeychainError.missingEntitlement) {
                try keychain.add(Data(), for: item, attributes: ItemAttributes(accessGroup: "ABCDE12345.not.mine"))
            }
            #expect(throws: KeychainError.param) {
                try keychain.add(Data(), for: item, attributes: ItemAttributes(accessGroup: ""))
            }
            do {
                _ = try keychain.copyMatching(["class": .string("nope")])
            } catch {
                #expect(error.status == OSStatusCode.noSuchClass)  // typed throws: no cast needed
                #expect(error.message == "unknown item class nope", "the daemon's specific reason")
                #expect(KeychainError.appleMessage(for: error.status) == "The specified item does not appear to be a valid keychain item.")
            }
        }

        @Test func asyncVariantsFromManyTasks() async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let item = GenericPassword(service: service, account: "task-\(index)")
                        try await keychain.set(Data("secret \(index)".utf8), for: item)
                        #expect(try await keychain.secret(for: item) == Data("secret \(index)".utf8))
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await keychain.items(GenericPassword.self, matching: ["svce": .string(service)]).count == 16)
            #expect(try await keychain.delete(GenericPassword(service: service, account: "task-3")))
            #expect(try await keychain.attributes(of: GenericPassword(service: service, account: "task-3")) == nil)
        }
    }
}
