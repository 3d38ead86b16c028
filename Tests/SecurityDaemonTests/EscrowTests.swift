import Foundation
import KeychainClient
import KeychainModel
import KeychainProtocol
import KeychainTestSupport
import Testing

/// Escrow keybags against a real daemon and enclave: an agent holding the escrow secret
/// opens class C after a restart without the passcode; nothing else; until revoked.
@Suite struct EscrowTests {
    let device: DaemonKeychain
    let api: Keychain
    let escrowFile: String

    init() throws {
        device = try DaemonKeychain()
        api = Keychain(paths: device.paths, daemonEnvironment: device.environment)
        escrowFile = try TemporaryKeychain.makeTemporaryDirectory() + "/agent.escrow"
        #expect(try security("set-keychain-password", input: "1234\n1234\n").status == 0)
        for pdmn in ["ck", "ak", "akpu", "cku"] {
            try api.add(genericPassword(account: pdmn, service: "escrow", ["pdmn": .string(pdmn), "v_Data": .utf8("secret-\(pdmn)")]))
        }
    }

    func security(_ arguments: String..., input: String = "") throws -> CommandResult {
        try CommandRunner.run(
            "security", arguments, environment: device.environment.merging(["KEYCHAIN_HOME": device.home]) { _, new in new }, input: input)
    }

    func read(_ pdmn: String) -> (OSStatusCode, Data?) {
        do {
            return (.success, try api.copyMatching(genericPassword(account: pdmn, service: "escrow", ["r_Data": .bool(true)]))?.dataValue)
        } catch {
            return (error.status, nil)
        }
    }

    /// Stops the daemon (its enclave exits with it): the next call finds the keychain as
    /// after a reboot, before its first unlock.
    func restart() {
        DaemonControl.stop(home: device.home)
    }

    @Test func theAgentOpensClassCAndNothingElseUntilRevoked() throws {
        #expect(try security("escrow", "create", "--out", escrowFile).status != 0, "needs the keychain password")
        let created = try security("escrow", "create", "--out", escrowFile, input: "1234\n")
        #expect(created.status == 0, "\(created.stderr)")
        var info = stat()
        #expect(stat(escrowFile, &info) == 0 && info.st_mode & 0o777 == 0o600)

        // The escrow keybag holds the two class C keys and nothing else.
        let records = try FileManager.default.contentsOfDirectory(atPath: device.home + "/escrow")
        #expect(records.count == 1)
        let record = try Data(contentsOf: URL(fileURLWithPath: device.home + "/escrow/" + records[0]))
        #expect(record[21] == 2, "entry count")
        #expect(record.range(of: Data([0, 0, 0, 2]) + Data("ak".utf8)) == nil && record.range(of: Data("akpu".utf8)) == nil)

        restart()
        #expect(read("ck").0 == OSStatusCode.interactionNotAllowed, "before the first unlock")
        let unlocked = try security("escrow", "unlock", escrowFile)
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(read("ck").1 == Data("secret-ck".utf8))
        #expect(read("cku").1 == Data("secret-cku".utf8))
        #expect(read("ak").0 == OSStatusCode.interactionNotAllowed, "class A needs the passcode")
        #expect(read("akpu").0 == OSStatusCode.interactionNotAllowed, "akpu needs the passcode")

        // A wrong secret opens nothing.
        restart()
        var text = try String(contentsOfFile: escrowFile, encoding: .utf8)
        text = String(text.dropLast(2)) + (text.dropLast().hasSuffix("0") ? "1" : "0") + "\n"
        let forged = escrowFile + ".forged"
        try text.write(toFile: forged, atomically: true, encoding: .utf8)
        #expect(try security("escrow", "unlock", forged).status == 51)
        #expect(read("ck").0 == OSStatusCode.interactionNotAllowed)

        #expect(try security("escrow", "revoke", escrowFile, input: "1234\n").status == 0)
        restart()
        #expect(try security("escrow", "unlock", escrowFile).status == 51, "revoked")
        #expect(read("ck").0 == OSStatusCode.interactionNotAllowed)
        #expect(try security("unlock-keychain", "-p", "1234").status == 0)
        #expect(read("ck").1 == Data("secret-ck".utf8))
    }

    @Test func applicationsCannotMakeOrRevokeEscrows() throws {
        let client = try device.connect()
        #expect(osStatus { try client.call(Service.CreateEscrow()) } == OSStatusCode.missingEntitlement)
        #expect(osStatus { try client.call(Service.RevokeEscrow(id: Data(count: 16))) } == OSStatusCode.missingEntitlement)
    }
}
