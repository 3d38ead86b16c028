import BenchWorkload
import CryptoExtras
import Foundation
import GRDBSQLite
import KeychainClient
import KeychainModel
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// File keychains (`create-keychain`): an item read and an add in a file keychain beside the
/// same in the login keychain of the same daemon (the floor: what a keychain costs anyway),
/// and an unlock beside its floor, the scrypt derivation with the keychain's own parameters
/// in this process.
enum FileKeychainOperations {
    static func measure(_ keychain: BenchKeychain, count: Int) throws -> [BenchReport.KeyOperation] {
        let client = try keychain.connect()
        let path = keychain.directory + "/bench-\(getpid()).keychain-db"
        let password = SecretBytes("bench password".utf8)
        try client.call(Service.CreateKeychain(path: path, password: password))
        defer {
            _ = try? client.call(Service.DeleteKeychain(path: path))
            _ = try? client.call(Service.SearchList(replacement: [keychain.paths.database]))
        }
        let service = "bench.file-keychain"
        func item(_ account: String, in file: String?) -> [String: KeychainValue] {
            var query: [String: KeychainValue] = [
                QueryKey.itemClass: .string(ItemClass.genericPassword.rawValue), SecName.kSecAttrService: .string(service),
                SecName.kSecAttrAccount: .string(account),
            ]
            if let file { query[SecName.kSecMatchSearchList] = .array([.string(file)]) }
            return query
        }
        for (file, suffix) in [(path as String?, "file"), (nil, "login")] {
            var add = item("read-" + suffix, in: nil)
            if let file { add[SecName.kSecUseKeychain] = .string(file) }
            add[QueryKey.valueData] = .data(BenchItems.secret(1))
            _ = try client.call(Service.Add(add))
        }
        var find = item("read-file", in: path), findLogin = item("read-login", in: nil)
        find[QueryKey.returnData] = .bool(true)
        findLogin[QueryKey.returnData] = .bool(true)
        let read = try KeyOperations.row(
            "find with data, file keychain", floor: "find with data, login keychain", count: count,
            { _ = try client.call(Service.CopyMatching(find)) }, floor: { _ = try client.call(Service.CopyMatching(findLogin)) })

        var added = 0
        let adds = try KeyOperations.row(
            "add, file keychain (checkpointed)", floor: "add, login keychain", count: max(count / 4, 1),
            {
                added += 1
                var add = item("add-\(added)", in: nil)
                add[SecName.kSecUseKeychain] = .string(path)
                add[QueryKey.valueData] = .data(BenchItems.secret(added))
                _ = try client.call(Service.Add(add))
            },
            floor: {
                added += 1
                var add = item("add-\(added)", in: nil)
                add[QueryKey.valueData] = .data(BenchItems.secret(added))
                _ = try client.call(Service.Add(add))
            })

        let (logN, blockSize, parallelism, salt) = try scryptParameters(path)
        let unlocks = try KeyOperations.row(
            "unlock a file keychain (scrypt N=2^\(logN), p=\(parallelism))", floor: "the same scrypt in-process", count: 3,
            { try client.call(Service.UnlockKeychain(path: path, password: password)) },
            floor: {
                _ = try password.withUnsafeBytes { bytes in
                    try KDF.Scrypt.deriveKey(
                        from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << logN, blockSize: blockSize, parallelism: parallelism,
                        maxMemory: 128 * blockSize << logN + (1 << 20))
                }
            })
        return [read, adds, unlocks]
    }

    /// The keychain file's scrypt parameters: its header's log N, r, p and salt (FileKeychainHeader).
    private static func scryptParameters(_ path: String) throws -> (Int, Int, Int, Data) {
        let file = try SQLiteFile(path)
        let select = try file.prepare("SELECT header FROM trousseau_keychain")
        defer { sqlite3_finalize(select) }
        guard sqlite3_step(select) == SQLITE_ROW, let blob = sqlite3_column_blob(select, 0) else { throw file.error("header") }
        let header = Array(UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(select, 0))))
        // "TRKC", version, UUID (16), log N, r (4), p (4), salt length (4), salt.
        guard header.count > 34 else { throw BenchError("a short keychain header") }
        let logN = Int(header[21])
        let blockSize = header[22..<26].reduce(0) { $0 << 8 | Int($1) }
        let parallelism = header[26..<30].reduce(0) { $0 << 8 | Int($1) }
        let saltLength = header[30..<34].reduce(0) { $0 << 8 | Int($1) }
        guard header.count >= 34 + saltLength else { throw BenchError("a short keychain header") }
        return (logN, blockSize, parallelism, Data(header[34..<(34 + saltLength)]))
    }
}
