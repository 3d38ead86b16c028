import Foundation
import KeychainTestSupport
import Testing

/// CI's run of the benchmark: every measurement works end to end (a real daemon, the
/// floors, whole processes, the report); its figures mean nothing in a debug build.
@Suite struct BenchmarkSmokeTests {
    @Test func aSmokeRunMeasuresEveryOperationAndWritesTheReport() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(directory) }
        let json = directory + "/bench.json"
        let result = try CommandRunner.run("keychain-bench", ["--smoke", "--json", json, "--directory", directory])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("| find with data "), "\(result.stdout)")

        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let operations = try #require(report["operations"] as? [[String: Any]])
        let names = ["add", "find attributes", "find with data", "find missing", "update", "delete"]
        for size in [100, 300] {
            for clients in [1, 4] {
                for name in names {
                    let row = operations.first { $0["operation"] as? String == name && $0["items"] as? Int == size && $0["clients"] as? Int == clients }
                    #expect((row?["samples"] as? Int) == 40, "\(name) at \(size) items, \(clients) clients")
                    #expect(((row?["opsPerSecond"] as? Double) ?? 0) > 0)
                }
            }
        }
        let floors = try #require(report["floors"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        for floor in ["unix socket round trip", "sqlite indexed lookup", "sqlite durable commit", "aes-256-gcm open", "process spawn"] {
            #expect(floors.contains(floor), "\(floor)")
        }
        let processes = try #require(report["processes"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        // The socket-activated first call needs systemd-socket-activate (the systemd package).
        let activated = FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")
        #expect(processes == ["first call, no daemon running"] + (activated ? ["first call, socket-activated daemon"] : []) + ["security find-generic-password -w"])
        let keys = try #require(report["keys"] as? [[String: Any]])
        // The unlock row names the scrypt parameters the keychain was given on this machine.
        let keyRows = keys.compactMap { $0["operation"] as? String }.map { $0.hasPrefix("unlock a file keychain (scrypt N=2^") ? "unlock a file keychain" : $0 }
        #expect(keyRows == [
            "P-256 sign (software key)", "P-256 verify (software key)", "RSA-2048 sign PKCS#1 v1.5 SHA-256", "P-256 sign (enclave key)",
            "trust evaluation, 3-certificate chain (securityd)", "find with data, file keychain", "add, file keychain (checkpointed)", "unlock a file keychain",
            "security profiles install (root + Wi-Fi), process", "keychain-access list page (100 items), GET /",
            "keychain-access Show password, POST /reveal", "keychain-access Activity page (200 refusals), GET /activity",
        ])
        #expect(keys.allSatisfy { ($0["floorMicros"] as? Double ?? 0) > 0 && ($0["samples"] as? Int ?? 0) > 0 })
        let memory = try #require(report["memory"] as? [[String: Any]])
        #expect(memory.count == 2 && memory.allSatisfy { ($0["daemonResidentKiB"] as? Int ?? 0) > 0 })
        #expect(!(try #require(report["targets"] as? [[String: Any]])).isEmpty)
        // The keychain it made is gone, and so is its daemon.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("keychain-bench-") }
        #expect(left.isEmpty, "\(left)")
    }

    /// The Secret Service run: gnome-keyring and Trousseau on one private bus, every size
    /// measured, lookups checked against the secrets stored, and the targets evaluated.
    @Test(.requires("gnome-keyring-daemon", "secret-tool", "dbus-daemon"))
    func aSecretServiceSmokeRunMeasuresBothProviders() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(directory) }
        let json = directory + "/bench.json"
        let result = try CommandRunner.run("keychain-bench", ["--secret-service", "--smoke", "--json", json, "--directory", directory])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let rows = try #require(report["secretService"] as? [[String: Any]])
        let measured = rows.map { "\($0["provider"] as? String ?? "?") \($0["items"] as? Int ?? 0)" }
        #expect(measured == ["gnome-keyring 30", "gnome-keyring 60", "Trousseau 30", "Trousseau 60", "Trousseau 100"])
        #expect(rows.allSatisfy { ($0["lookups"] as? Int) == 30 && ($0["lookupP50Micros"] as? Double ?? 0) > 0 && ($0["pingP50Micros"] as? Double ?? 0) > 0 })
        // Properties.Get of the filled collection's Locked, which python's keyring asks before every call.
        #expect(rows.allSatisfy { ($0["lockedP50Micros"] as? Double ?? 0) > 0 }, "\(rows)")
        let targets = try #require(report["targets"] as? [[String: Any]]).compactMap { $0["target"] as? String }
        #expect(targets.contains("Secret Service lookup, 60 items: faster than gnome-keyring"), "\(targets)")
        // The scratch collection's life is measured against Trousseau only (gnome-keyring's
        // CreateCollection waits for its prompter).
        #expect(rows.map { ($0["scratchCollectionP50Micros"] as? Double ?? 0) > 0 } == [false, false, true, true, true], "\(rows)")
        #expect(targets.contains("Secret Service scratch collection, 100 items: p50 ≤ 2 × CreateItem + 2 × Ping"), "\(targets)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("keychain-bench-") }
        #expect(left.isEmpty, "\(left)")
    }

    /// The sync run: trousseau-syncd on SQLite and on the tests' PostgreSQL, every row
    /// measured against its floors, the targets evaluated, nothing left behind.
    @Test func aSyncSmokeRunMeasuresTheEnclaveAndBothDatabases() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(directory) }
        let json = directory + "/bench.json"
        let postgres = try PostgresServer.shared.get().makeDatabase()
        let result = try CommandRunner.run("keychain-bench", ["--sync", "--smoke", "--postgres", postgres, "--json", json, "--directory", directory])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let rows = try #require(report["sync"] as? [[String: Any]])
        for (backend, count) in [("enclave", 2), ("SQLite", 12), ("PostgreSQL", 13)] {
            let mine = rows.filter { $0["backend"] as? String == backend }
            #expect(mine.count == count && mine.allSatisfy { ($0["p50Micros"] as? Double ?? 0) > 0 && ($0["floorMicros"] as? Double ?? 0) > 0 }, "\(backend): \(mine)")
        }
        let targets = try #require(report["targets"] as? [[String: Any]]).compactMap { $0["target"] as? String }
        #expect(targets.count == 4, "\(targets)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix("bench-sync-") || $0.hasPrefix("bench-engine-") || $0.hasPrefix("floor-") || $0.hasPrefix("keychain-bench-")
        }
        #expect(left.isEmpty, "\(left)")
    }

    /// The scale run on the tests' PostgreSQL, 30 devices: every socket held, every hint of
    /// every write received at each step, and the floors measured.
    @Test func aSyncScaleSmokeRunHoldsEverySocketAndHearsEveryHint() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManagerLite.removeTree(directory) }
        let json = directory + "/bench.json"
        let postgres = try PostgresServer.shared.get().makeDatabase()
        let result = try CommandRunner.run("keychain-bench", ["--sync-scale", "--smoke", "--postgres", postgres, "--json", json, "--directory", directory])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let scale = try #require(report["syncScale"] as? [String: Any])
        #expect(scale["devices"] as? Int == 30 && scale["accounts"] as? Int == 10 && scale["connectionsHeld"] as? Int == 30, "\(scale)")
        #expect((scale["floorRoundTripMicros"] as? Double ?? 0) > 0 && (scale["floorIdleHintP50Micros"] as? Double ?? 0) > 0)
        let steps = try #require(scale["steps"] as? [[String: Any]])
        #expect(steps.count == 2, "\(steps)")
        for step in steps {
            #expect(step["failed"] as? Int == 0 && step["hintsExpected"] as? Int == 2 * (step["attempted"] as? Int ?? 0), "\(step)")
            #expect(step["hintsReceived"] as? Int == step["hintsExpected"] as? Int, "\(step)")
        }
    }
}
