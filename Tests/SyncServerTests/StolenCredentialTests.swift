import Foundation
import KeychainTestSupport
import SyncCrypto
import SyncProtocol
import Testing

/// Issue 61's first two findings, with real devices (securityd, enclave, `security`) against
/// trousseau-syncd's routes and SQL store (``LyingSyncServer``, which also keeps each device's
/// last `Authorization` header: what a thief who took the laptop holds).
extension MaliciousServerTests {
    /// Finding 1: the server gives B the removal of C but withholds the rotation (the new
    /// share, class keys and pointer) and A's heads from B's feed. B's own chain says C was
    /// removed after the keys B holds were made, so B seals nothing for the server under them
    /// — C, served on with its removal hidden from it, would open it — and its status says
    /// why. When the server gives the rotation, B reads the feed again, takes it and sends.
    @Test func aMemberGivenTheRemovalButNotTheRotationSendsNothingTheRemovedDeviceOpens() async throws {
        let server = try await LyingSyncServer.start()
        try await onThread { [self] in
            try circle(server, three: true)
            try add(0, "shared", "before the removal")
            try devices.roundsUntilQuiet(only: [0, 1, 2])
            let account = try self.account(0)
            let (a, b, removed) = (try id(0), try id(1), try id(2))
            let before = server.store.history(of: account).count
            let cut = server.store.history(of: account).compactMap(\.seq).max() ?? 0
            let keyTypes = Set([SyncRecordType.keyShare, .classKey, .keyPointer].map(\.rawValue))
            server.store.lies.withLock {
                $0.keepRevokedDevices = true
                $0.membership = { device, honest in device == removed ? honest.filter { $0.index < 3 } : honest }
                $0.changes = { device, _, honest in
                    guard device == b else { return honest }
                    var page = honest
                    page.records.removeAll { ($0.seq ?? 0) > cut && (keyTypes.contains($0.type) || $0.record == SyncHead.recordID(of: a)) }
                    return page
                }
            }
            let removal = try security(0, "sync", "remove-device", removed.rawValue)
            #expect(removal.status == 0, "\(removal.stderr)\n\(devices.log(0))")
            _ = try round(0)
            _ = try round(1)
            try add(1, "b-after", "written by B after")
            _ = try round(1)
            let said = try status(1)
            #expect(said.contains("devices: 2"), "B was given the removal: \(said)")
            #expect(said.contains("the zone's keys predate the removal at device-list entry 3") && said.contains("withholding"), "\(said)")
            #expect(said.contains("pending: 1"), "B's write waits: \(said)")
            let byB = { server.store.history(of: account)[before...].filter { (try? SyncRecordEnvelope(decoding: $0.body).writer) == b } }
            #expect(byB().isEmpty, "B sealed nothing for the server under the keys C holds")
            _ = try round(2)
            #expect(try password(2, "b-after") == nil, "C opens nothing of B's")

            server.behave()
            _ = try round(1)
            let healed = try status(1)
            #expect(!healed.contains("predate") && healed.contains("pending: 0"), "\(healed)\n\(devices.log(1))")
            let old = parentKeys(server.store.history(of: account)[..<before], excluding: SyncIdentifier("nobody")!)
            let written = byB().filter { $0.type == SyncRecordType.item.rawValue }
            #expect(!written.isEmpty && parentKeys(written[...], excluding: removed).isDisjoint(with: old), "B seals under the new keys")
            _ = try round(0)
            #expect(try password(0, "b-after") == "written by B after")
        }
        await server.stop()
    }

    /// Finding 2, on SQLite and PostgreSQL: a thief with B's credential appends garbage to the
    /// membership chain and writes garbage over the next version of an item. The server
    /// refuses the entry (no member signed it); the garbage record, which it cannot tell from
    /// ciphertext, is refused by every device and written over by the next honest write. A
    /// removes B: B's credential gets 401, and A's and C's rounds go on.
    @Test(arguments: Backend.available)
    func aStolenCredentialNeitherHaltsTheCircleNorBlocksItsRevocation(_ backend: Backend) async throws {
        let server = try await LyingSyncServer.start(backend)
        let (account, b) = try await onThread { [self] in
            try circle(server, three: true)
            try add(0, "shared", "first")
            try devices.roundsUntilQuiet(only: [0, 1, 2])
            return (try self.account(0), try id(1))
        }
        let stolen = try #require(server.store.credentials.withLock { $0[b] })
        let chain = try await server.store.inner.membership(account: account, after: -1)
        let garbage = MembershipEntry(index: Int64(chain.count), entry: Data("x".utf8))
        let appended = try await server.send("POST", "/v1/membership", authorization: stolen, json: try JSONEncoder().encode(garbage))
        #expect(appended.status == 400, "\(appended.status) \(String(decoding: appended.body, as: UTF8.self))")
        #expect(try await server.store.inner.membership(account: account, after: -1).count == chain.count)

        let item = try #require(server.store.history(of: account).last { $0.type == SyncRecordType.item.rawValue })
        let overwrite = BatchRequest(writes: [SyncRecord(record: item.record, type: item.type, version: item.version + 1, body: Data("x".utf8))])
        let written = try await server.send("POST", "/v1/zones/keychain/batch", authorization: stolen, json: try JSONEncoder().encode(overwrite))
        #expect(written.status == 200, "the server cannot tell garbage from ciphertext: \(written.status)")

        try await onThread { [self] in
            let removal = try security(0, "sync", "remove-device", b.rawValue)
            #expect(removal.status == 0, "\(removal.stderr)\n\(devices.log(0))")
            let changed = try security(0, "add-generic-password", "-U", "--synchronizable", "-a", "shared", "-s", "lie.example", "-w", "second")
            #expect(changed.status == 0, "\(changed.stderr)")
            let sent = try round(0)
            #expect(sent.contains("sent 1"), "A writes over the version nobody reads: \(sent)\n\(devices.log(0))")
            #expect(try status(0).contains("pending: 0"))
            _ = try round(2)
            #expect(try password(2, "shared") == "second")
        }
        let shut = try await server.send("GET", "/v1/membership", authorization: stolen)
        #expect(shut.status == 401, "B's credential is revoked: \(shut.status)")
        await server.stop()
    }

    /// Finding 6: `sync disable` revokes the device's own credential before it forgets it, so
    /// the server stops serving the device that left (the user is told to remove it from the
    /// device list on another device, which rotates the keys).
    @Test func turningSyncOffRevokesTheDevicesCredential() async throws {
        let server = try await LyingSyncServer.start(.sqlite)
        let b = try await onThread { [self] in
            try circle(server, three: false)
            return try id(1)
        }
        let credential = try #require(server.store.credentials.withLock { $0[b] })
        #expect(try await server.send("GET", "/v1/membership", authorization: credential).status == 200)
        try await onThread { [self] in
            let off = try security(1, "sync", "disable")
            #expect(off.status == 0, "\(off.stderr)")
            #expect(off.stdout.contains("security sync remove-device"), "\(off.stdout)")
            #expect(try status(1) == "sync: off\n")
            #expect(try status(0).contains("devices: 2"), "A still counts B until it removes it")
        }
        #expect(try await server.send("GET", "/v1/membership", authorization: credential).status == 401, "B revoked its own credential")
        try await onThread { [self] in
            let removal = try security(0, "sync", "remove-device", b.rawValue)
            #expect(removal.status == 0, "the removal from another member still works: \(removal.stderr)")
            #expect(try status(0).contains("devices: 1"))
        }
        await server.stop()
    }

    /// Finding 2, the device's side: a server that serves an entry that does not verify after
    /// the real chain. A passes over it and says so; its rounds go on, and it still removes B
    /// from the chain it verified (the server takes the removal at the verified end).
    @Test func anUnverifiableChainEntryIsPassedOverAndARemovalStillWorks() async throws {
        let server = try await LyingSyncServer.start()
        try await onThread { [self] in
            try circle(server)
            try add(0, "kept", "value")
            try devices.roundsUntilQuiet(only: [0, 1])
            let (a, b) = (try id(0), try id(1))
            server.store.lies.withLock {
                $0.membership = { device, honest in
                    guard device == a else { return honest }
                    // After the two real entries (genesis, B's add): one no member signed.
                    return honest.filter { $0.index < 2 } + [MembershipEntry(index: 2, entry: Data("x".utf8))]
                }
            }
            let round = try security(0, "sync", "now")
            #expect(round.status == 0, "one bad entry does not halt the round: \(round.stderr)")
            let said = try status(0)
            #expect(said.contains("a device list with an entry at index 2 that does not verify") && said.contains("acts on the 2 entries it verified"), "\(said)")
            let removal = try security(0, "sync", "remove-device", b.rawValue)
            #expect(removal.status == 0, "\(removal.stderr)\n\(devices.log(0))")
            server.behave()
            #expect(try security(0, "sync", "now").status == 0)
            #expect(try status(0).contains("devices: 1"))
            let shut = try security(1, "sync", "now")
            #expect(shut.status != 0, "B was revoked")
        }
        await server.stop()
    }
}
