import Crypto
import Enclave
import Foundation
import KeychainModel
import KeychainSystem
import SyncCrypto
import SyncProtocol

extension SyncBench {
    /// A device's record work through its enclave (the release trousseau-enclave beside us, in
    /// a home of its own): sealing an item record for upload and opening one that came down.
    /// The floor is the same envelope sealed or opened in this process — what the enclave's
    /// round trip and its unwrapping of two keys (class key, identity) add is the difference.
    mutating func measureEnclave() throws {
        let home = directory + "/bench-sync-enclave-\(getpid())"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let enclave = try EnclaveClient.launch(home: home)
        let identity = try enclave.createSyncIdentity(device: SyncIdentifier("bench-device")!)
        let classKey = try enclave.createSyncKey(role: .classC)
        let secret = SecretBytes(Data(repeating: 0x61, count: 64))
        func context(_ index: Int) -> SyncRecordContext {
            SyncRecordContext(zone: SyncIdentifier("zone")!, record: SyncIdentifier("item\(index)")!, version: 1, type: .item)
        }
        let count = plan.floorSamples
        let sealed = try Latencies.measure(count) { index in
            _ = try enclave.sealSyncRecord(secret, context: context(index), parent: classKey, identity: identity)
        }
        let envelope = try enclave.sealSyncRecord(secret, context: context(0), parent: classKey, identity: identity)
        let opened = try Latencies.measure(count) { _ in
            _ = try enclave.openSyncRecord(envelope, context: context(0), parent: classKey, writer: identity.publicKeys)
        }

        // The floor: the same envelope work with the keys in this process.
        let keys = try SyncDeviceKeys.generate(device: SyncIdentifier("bench-device")!)
        let key = SymmetricKey(size: .bits256), keyID = SyncIdentifier("class-c")!
        let sealFloor = try Latencies.measure(count) { index in
            _ = try SyncRecordEnvelope.seal(secret, context: context(index), parent: (keyID, key), writer: keys.device, signingKey: keys.signing)
        }
        let local = try SyncRecordEnvelope.seal(secret, context: context(0), parent: (keyID, key), writer: keys.device, signingKey: keys.signing)
        let openFloor = try Latencies.measure(count) { _ in
            _ = try local.open(context: context(0)) { _ in key } writerKey: { _ in keys.signing.publicKey }
        }
        func row(_ operation: String, _ latencies: Latencies, _ floor: Latencies, _ floorName: String) -> BenchReport.SyncRow {
            BenchReport.SyncRow(
                backend: "enclave", operation: operation, clients: 1, samples: latencies.count, opsPerSecond: latencies.throughput,
                p50Micros: latencies.p50, p99Micros: latencies.p99, floor: floorName, floorMicros: floor.p50, ratio: latencies.p50 / floor.p50)
        }
        rows.append(row("seal an item record (64-byte secret)", sealed, sealFloor, "the same seal in process"))
        rows.append(row("open an item record (64-byte secret)", opened, openFloor, "the same open in process"))
    }
}
