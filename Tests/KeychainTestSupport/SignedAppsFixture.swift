// Test support: compiled in debug builds only (`swift build -c release` builds the products,
// and a release build cannot `@testable import`).
#if TROUSSEAU_TEST_HOOKS
import Foundation
import KeychainModel
import Testing

/// Copies of a test program (`keychain-probe`, `keychain-example`) in a temporary directory,
/// signed (or not) by developer identities of a real daemon's keychain, and run as that
/// daemon's clients.
public final class SignedAppsFixture: @unchecked Sendable {
    // @unchecked: immutable after init.
    public let keychain: DaemonKeychain
    public let directory: String
    public var log: String { directory + "/securityd.log" }

    public init() throws {
        keychain = try DaemonKeychain()
        directory = try TemporaryKeychain.makeTemporaryDirectory()
    }

    deinit {
        DaemonControl.stop(home: keychain.home)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The environment of every command: this keychain, its daemon (with a log).
    public var environment: [String: String] {
        [
            "KEYCHAIN_HOME": keychain.home,
            "TROUSSEAU_SECURITYD": DaemonKeychain.daemonExecutable,
            "TROUSSEAU_SECURITYD_LOG": log,
        ]
    }

    public var daemonLog: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    public func security(_ arguments: String...) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: environment)
    }

    /// A developer identity of `team` issued by this keychain's local root.
    @discardableResult
    public func identity(team: String, appGroups: [String] = []) throws -> String {
        let out = directory + "/identity-" + team
        let result = try security(["create-developer-identity", "--team", team, "--out", out] + appGroups.flatMap { ["--app-group", $0] })
        #expect(result.status == 0, "create-developer-identity: \(result.stderr)")
        return out
    }

    public func security(_ arguments: [String]) throws -> CommandResult {
        try CommandRunner.run("security", arguments, environment: environment)
    }

    /// A fresh copy of `program`, unsigned.
    @discardableResult
    public func app(_ name: String, program: String = "keychain-probe") throws -> String {
        let path = directory + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try CommandRunner.copyExecutable(CommandRunner.productsDirectory.appendingPathComponent(program).path, to: path)
        return path
    }

    /// A fresh copy of `program` signed with `identity` and entitlements (a JSON object).
    @discardableResult
    public func signedApp(_ name: String, program: String = "keychain-probe", identity: String, entitlements: String) throws -> String {
        let path = try app(name, program: program)
        let file = directory + "/" + name + ".entitlements.json"
        try entitlements.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try security("codesign", "--identity", identity, "--entitlements", file, path)
        #expect(result.status == 0, "codesign: \(result.stderr)")
        return path
    }

    /// Runs an app of the fixture with the probe's arguments.
    public func run(_ name: String, _ arguments: String..., environment extra: [String: String] = [:], wrapper: [String] = []) throws -> ProbeResult {
        let path = directory + "/" + name
        let result = wrapper.isEmpty
            ? try CommandRunner.run(executable: path, arguments, environment: environment.merging(extra) { _, new in new })
            : try CommandRunner.run(executable: wrapper[0], Array(wrapper.dropFirst()) + [path] + arguments, environment: environment.merging(extra) { _, new in new })
        return ProbeResult(result.stdout)
    }
}

/// What a test program printed: its OSStatus, then the item's group and data, or a list.
public struct ProbeResult: CustomStringConvertible {
    public var status: Int32?
    public var group: String?
    public var data: String?
    public var items: [String] = []

    public init(_ output: String) {
        for line in output.split(separator: "\n").map(String.init) {
            if line.hasPrefix("status=") {
                status = Int32(line.dropFirst("status=".count))
            } else if line.hasPrefix("group=") {
                group = String(line.dropFirst("group=".count))
            } else if line.hasPrefix("data=") {
                data = String(line.dropFirst("data=".count))
            } else {
                items.append(line)
            }
        }
    }

    public var description: String { "status \(status.map(String.init) ?? "none") group \(group ?? "-") items \(items)" }
}
#endif
