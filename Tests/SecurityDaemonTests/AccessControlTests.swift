import Crypto
import Foundation
import GRDB
import KeychainClient
import KeychainModel
import KeychainSystem
import KeychainTestSupport
import Testing

/// Access controls end to end: a real securityd and enclave, the enclave trusting the test
/// sensor (scripted scans), the user's passcode typed through a scripted passcode agent.
/// The keychain passcode is 1234; finger-1 is enrolled.
@Suite final class AccessControlTests {
    let keychain: DaemonKeychain
    let sensor: String
    let agent: String
    let api: Keychain

    init() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        sensor = directory + "/sensor"
        try FileManager.default.createDirectory(atPath: sensor, withIntermediateDirectories: true)
        try "finger-1\n".write(toFile: sensor + "/enrolled", atomically: true, encoding: .utf8)
        // The agent answers with the next line of `answers` ("cancel": the user cancels; none
        // left: cancel too) and logs what it was asked in `asked`.
        agent = directory + "/agent"
        let script = """
            #!/bin/sh
            dir=$(dirname "$0")
            echo "$1" >> "$dir/asked"
            line=$(head -n 1 "$dir/answers" 2>/dev/null)
            sed -i 1d "$dir/answers" 2>/dev/null
            [ -z "$line" ] || [ "$line" = cancel ] && exit 1
            printf '%s\\n' "$line"
            """
        try CommandRunner.writeExecutable(Data(script.utf8), to: agent)
        keychain = try DaemonKeychain(daemonEnvironment: ["TROUSSEAU_TEST_SENSOR": sensor])
        api = Keychain(paths: keychain.paths, daemonEnvironment: keychain.environment)
        // The daemon starts here, with the sensor named explicitly: the security tool (a
        // client like any other) would start one without it (ConfigurationInjectionTests).
        _ = try keychain.connect()
        let set = try CommandRunner.run(
            "security", ["set-keychain-password"], environment: keychain.environment.merging(["KEYCHAIN_HOME": keychain.home]) { _, new in new },
            input: "1234\n1234\n")
        #expect(set.status == 0, "\(set.stderr)")
    }

    // MARK: - Helpers

    func context(reuse: UInt32 = 0) -> AuthenticationContext {
        let context = AuthenticationContext(frontEnd: PresenceFrontEnd(agent: agent))
        context.reuseSeconds = reuse
        return context
    }

    /// What the agent answers next, and what the sensor scans next.
    func script(answers: [String] = [], scans: [String] = []) throws {
        try answers.map { $0 + "\n" }.joined().write(toFile: agentDirectory + "/answers", atomically: true, encoding: .utf8)
        try scans.map { $0 + "\n" }.joined().write(toFile: sensor + "/scans", atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: agentDirectory + "/asked")
    }

    var agentDirectory: String { String(agent.dropLast("/agent".count)) }
    /// What the agent was asked for since the last ``script(answers:scans:)``.
    var asked: [String] {
        ((try? String(contentsOfFile: agentDirectory + "/asked", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
    /// Scans the sensor still has (not taken).
    var scansLeft: Int {
        ((try? String(contentsOfFile: sensor + "/scans", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func item(_ account: String, _ flags: AccessControl.Flags, _ extra: [String: KeychainValue] = [:]) throws -> [String: KeychainValue] {
        genericPassword(
            account: account,
            ["v_Data": .utf8("secret of \(account)"), "accc": .data(try AccessControl(protection: .whenUnlocked, flags: flags).encoded)]
        ).merging(extra) { _, new in new }
    }

    func read(_ account: String, _ context: AuthenticationContext? = nil, _ extra: [String: KeychainValue] = [:]) -> (OSStatusCode, KeychainValue?) {
        do {
            let query = genericPassword(account: account, ["r_Data": .bool(true)]).merging(extra) { _, new in new }
            return (.success, try api.copyMatching(query, context: context ?? self.context()))
        } catch {
            return (error.status, nil)
        }
    }

    typealias Flags = AccessControl.Flags

    /// One access control, and how to script the user so that reading it is allowed,
    /// denied or cancelled.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let flags: Flags
        let allow: (answers: [String], scans: [String])
        let deny: (answers: [String], scans: [String])
        let cancel: (answers: [String], scans: [String])
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "devicePasscode", flags: Flags.devicePasscode, allow: (["1234"], []), deny: (["9999"], []), cancel: (["cancel"], [])),
        // userPresence and .or try the finger first.
        Case(name: "userPresence", flags: Flags.userPresence, allow: ([], ["match finger-1"]), deny: ([], ["nomatch"]), cancel: ([], ["cancel"])),
        Case(name: "biometryAny", flags: Flags.biometryAny, allow: ([], ["match finger-1"]), deny: ([], ["nomatch"]), cancel: ([], ["cancel"])),
        Case(
            name: "biometryCurrentSet", flags: Flags.biometryCurrentSet, allow: ([], ["match finger-1"]), deny: ([], ["nomatch"]),
            cancel: ([], ["cancel"])),
        Case(
            name: "devicePasscode or biometryAny", flags: [.devicePasscode, .or, .biometryAny],
            allow: ([], ["match finger-1"]), deny: ([], ["nomatch"]), cancel: ([], ["cancel"])),
        Case(
            name: "devicePasscode and biometryCurrentSet", flags: [.devicePasscode, .and, .biometryCurrentSet],
            allow: (["1234"], ["match finger-1"]), deny: (["9999"], ["match finger-1"]), cancel: (["cancel"], ["match finger-1"])),
        Case(
            name: "devicePasscode, biometryAny (and by default)", flags: [.devicePasscode, .biometryAny],
            allow: (["1234"], ["match finger-1"]), deny: (["1234"], ["nomatch"]), cancel: (["1234"], ["cancel"])),
        Case(
            name: "applicationPassword", flags: Flags.applicationPassword, allow: (["app-pw"], []), deny: (["wrong"], []),
            cancel: (["cancel"], [])),
        Case(
            name: "userPresence and applicationPassword", flags: [.userPresence, .applicationPassword],
            allow: (["app-pw"], ["match finger-1"]), deny: (["app-pw"], ["nomatch"]), cancel: (["cancel"], [])),
    ]

    // MARK: - Tests

    @Test(arguments: cases)
    func everyCombination(_ access: Case) throws {
        // Adding asks only for an application password (the one the item will need).
        try script(answers: ["app-pw"])
        try api.add(try item("a", access.flags), context: context())
        #expect(asked == (access.flags.contains(.applicationPassword) ? ["application-password"] : []))

        try script(answers: access.allow.answers, scans: access.allow.scans)
        let (allowed, data) = read("a")
        #expect(allowed == OSStatusCode.success && data == .utf8("secret of a"), "allowed: \(allowed)")
        #expect(scansLeft == 0)

        try script(answers: access.deny.answers, scans: access.deny.scans)
        #expect(read("a").0 == OSStatusCode.authFailed, "denied")

        try script(answers: access.cancel.answers, scans: access.cancel.scans)
        #expect(read("a").0 == OSStatusCode.userCanceled, "cancelled")

        // Not interactive: neither the agent nor the sensor is asked.
        try script(answers: ["1234", "app-pw"], scans: ["match finger-1"])
        #expect(read("a", nil, ["u_AuthUI": .string("u_AuthUIF")]).0 == OSStatusCode.interactionNotAllowed)
        let quiet = context()
        quiet.interactionNotAllowed = true
        #expect(read("a", quiet).0 == OSStatusCode.interactionNotAllowed)
        #expect(asked.isEmpty && scansLeft == 1)

        // Attributes need nobody; neither does deleting.
        let attributes = try api.copyMatching(genericPassword(account: "a", ["r_Attributes": .bool(true)]))
        #expect(attributes?.dictionary?["acct"] == .string("a"))
        try api.delete(genericPassword(account: "a"))
        #expect(asked.isEmpty && scansLeft == 1)
        #expect(read("a").0 == OSStatusCode.itemNotFound)
    }

    /// An enclave key's access control is the enclave's to enforce, with the same proofs and
    /// contexts as an item's: each signature asks (or uses a proof made ahead, or a reuse
    /// window); a wrong finger or passcode is refused, a cancel is a cancel; locked, the key
    /// is unavailable; and a blob whose access control was edited does not open.
    @Test(arguments: [cases[0], cases[1], cases[5]])
    func enclaveKeysEnforceTheirAccessControl(_ access: Case) throws {
        let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: access.flags.union(.privateKeyUsage))
        let blob = try api.createEnclaveKey(protection: .whenUnlockedThisDeviceOnly, access: control, context: context())
        let message = Data("signed in the enclave".utf8)
        let publicKey = try P256.Signing.PublicKey(x963Representation: try EnclaveKeyBlob(data: blob).publicKey)
        func sign(_ context: AuthenticationContext? = nil, using other: Data? = nil) -> (OSStatusCode, Data?) {
            do {
                let output = try api.useEnclaveKey(other ?? blob, .sign(algorithm: "algid:sign:ECDSA:message-X962:SHA256", data: message), context: context ?? self.context(), prompt: "Sign")
                return (.success, output.withUnsafeBytes { Data($0) })
            } catch {
                return (error.status, nil)
            }
        }

        try script(answers: access.allow.answers, scans: access.allow.scans)
        let (allowed, signature) = sign()
        #expect(allowed == .success, "allowed: \(allowed)")
        let parsed = try signature.map { try P256.Signing.ECDSASignature(derRepresentation: $0) }
        #expect(parsed.map { publicKey.isValidSignature($0, for: message) } == true)
        #expect(scansLeft == 0)

        try script(answers: access.deny.answers, scans: access.deny.scans)
        #expect(sign().0 == .authFailed, "denied")
        try script(answers: access.cancel.answers, scans: access.cancel.scans)
        #expect(sign().0 == .userCanceled, "cancelled")

        // Proven ahead, in the context the key is used with.
        let evaluated = context(reuse: 5)
        try script(answers: access.allow.answers, scans: access.allow.scans)
        try api.prove(control.factors, required: control.requiredFactors, in: evaluated, prompt: "Unlock the key")
        try script(answers: [], scans: [])
        #expect(sign(evaluated).0 == .success && sign(evaluated).0 == .success, "within the window no asking")
        #expect(asked.isEmpty && scansLeft == 0)

        // Locked, the class key is gone: nobody is asked.
        #expect(try CommandRunner.run("security", ["lock-keychain"], environment: ["KEYCHAIN_HOME": keychain.home]).status == 0)
        #expect(sign(evaluated).0 == .interactionNotAllowed)
        #expect(try CommandRunner.run("security", ["unlock-keychain", "-p", "1234"], environment: ["KEYCHAIN_HOME": keychain.home]).status == 0)

        // The access control in the blob is bound to the wrapping: weakened, it does not open.
        var edited = try EnclaveKeyBlob(data: blob)
        edited.access = try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .privateKeyUsage)
        #expect(sign(evaluated, using: edited.data).0 == .decode)
    }

    /// A proof serves the operation it was made for, once; with a reuse window, every
    /// operation of its context until the window ends.
    @Test func reuseWindowHonouredAndExpired() throws {
        try api.add(try item("a", Flags.devicePasscode))
        try api.add(try item("b", Flags.devicePasscode))

        let once = context()
        try script(answers: ["1234", "1234"])
        #expect(read("a", once).1 == .utf8("secret of a"))
        #expect(read("a", once).1 == .utf8("secret of a"))
        #expect(asked.count == 2, "without a window each read asks")

        let windowed = context(reuse: 2)
        try script(answers: ["1234"])
        #expect(read("a", windowed).1 == .utf8("secret of a"))
        #expect(read("b", windowed).1 == .utf8("secret of b"))
        #expect(read("a", windowed).1 == .utf8("secret of a"))
        #expect(asked.count == 1, "within the window one passcode serves every read")
        #expect(read("a", context(reuse: 2)).0 == OSStatusCode.userCanceled, "another context proved nothing (the agent has no answer left)")

        Thread.sleep(forTimeInterval: 2.5)
        try script(answers: ["1234"])
        #expect(read("b", windowed).1 == .utf8("secret of b"))
        #expect(asked.count == 1, "after the window the user is asked again")

        // Proven ahead (what LAContext.evaluatePolicy does): the next operation needs no asking.
        let evaluated = context()
        try script(answers: ["1234"])
        try api.prove([.passcode], required: 1, in: evaluated, prompt: "Unlock the vault")
        #expect(asked == ["passcode"])
        #expect(read("a", evaluated).1 == .utf8("secret of a"))
        #expect(asked.count == 1)

        try api.invalidate(windowed)
        try script(answers: [])
        #expect(read("b", windowed).0 == OSStatusCode.userCanceled, "an invalidated context proves nothing")
    }

    /// biometryCurrentSet is bound to the enrollment of its time: a finger enrolled later
    /// makes it unreadable for good (the sensor is not even asked); biometryAny still opens.
    @Test func enrollmentChangeInvalidatesCurrentSetButNotAny() throws {
        try api.add(try item("current", Flags.biometryCurrentSet))
        try api.add(try item("any", Flags.biometryAny))
        try api.add(try item("either", [.biometryCurrentSet, .or, .devicePasscode]))
        try script(scans: ["match finger-1", "match finger-1"])
        #expect(read("current").1 == .utf8("secret of current"))
        #expect(read("any").1 == .utf8("secret of any"))

        try "finger-1\nfinger-2\n".write(toFile: sensor + "/enrolled", atomically: true, encoding: .utf8)
        try script(answers: ["1234"], scans: ["match finger-1", "match finger-2"])
        #expect(read("current").0 == OSStatusCode.authFailed)
        #expect(scansLeft == 2, "nothing was scanned for an item no finger can open")
        #expect(read("any").1 == .utf8("secret of any"))
        #expect(read("any").1 == .utf8("secret of any"))
        // With the passcode as an alternative, only the finger stops counting: the finger
        // is tried first, then the passcode.
        try script(answers: ["1234"], scans: ["match finger-1"])
        #expect(read("either").1 == .utf8("secret of either"))
        #expect(asked == ["passcode"] && scansLeft == 0)
    }

    /// `security find-generic-password -w` reads a protected item (another program's, so
    /// first the keychain password on standard input), asking the passcode agent in a
    /// context of its own, with the operation prompt.
    @Test func theSecurityToolAsksThroughTheAgent() throws {
        try api.add(try item("tool", Flags.devicePasscode))
        try script(answers: ["1234"])
        let environment = keychain.environment.merging(["KEYCHAIN_HOME": keychain.home, "TROUSSEAU_PASSCODE_AGENT": agent]) { _, new in new }
        let found = try CommandRunner.run("security", ["find-generic-password", "-a", "tool", "-w"], environment: environment, input: "1234\n")
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout == "secret of tool\n")
        #expect(asked == ["passcode"])
        try script(answers: ["cancel"])
        let cancelled = try CommandRunner.run("security", ["find-generic-password", "-a", "tool", "-w"], environment: environment, input: "1234\n")
        #expect(cancelled.status == 128, "errSecUserCanceled (-128) truncated to 8 bits: \(cancelled.stderr)")
    }

    /// kSecUseAuthenticationUISkip leaves out what would need the user.
    @Test func skipLeavesProtectedItemsOut() throws {
        try api.add(genericPassword(account: "plain", ["v_Data": .utf8("p")]))
        try api.add(try item("guarded", Flags.devicePasscode))
        try script(answers: ["1234"])
        let all = try api.copyMatching(genericPassword(["r_Data": .bool(true), "r_Attributes": .bool(true), "m_Limit": .string("m_LimitAll"), "u_AuthUI": .string("u_AuthUIS")]))
        #expect(all?.array?.compactMap { $0.dictionary?["acct"]?.stringValue } == ["plain"])
        #expect(asked.isEmpty)
    }

    /// The access control is stored in clear but bound into the item key's wrapping: edited
    /// in the database, the item becomes undecodable, never unprotected.
    @Test func anEditedAccessControlMakesTheItemUndecodable() throws {
        try api.add(try item("guarded", Flags.devicePasscode))
        try api.add(try item("downgraded", Flags.devicePasscode))
        DaemonControl.stop(home: keychain.home)

        let database = try DatabaseQueue(path: keychain.paths.database)
        try database.write { db in
            for replacement in [Flags.biometryAny, Flags()] {  // another constraint; none at all
                // Each row's secret blob: version 2, the access control's length and bytes, the rest.
                for row in try Row.fetchAll(db, sql: "SELECT rowid, secret FROM genp") {
                    var blob: Data = row["secret"]
                    let length = Int(blob[1]) << 8 | Int(blob[2])
                    let stored = try AccessControl(encoded: blob.subdata(in: 3..<3 + length))
                    guard stored.flags == Flags.devicePasscode else { continue }
                    let edited = try AccessControl(protection: .whenUnlocked, flags: replacement).encoded
                    blob.replaceSubrange(1..<3 + length, with: Data([UInt8(edited.count >> 8), UInt8(edited.count & 0xff)]) + edited)
                    try db.execute(sql: "UPDATE genp SET secret = ? WHERE rowid = ?", arguments: [blob, row["rowid"] as Int64])
                    break
                }
            }
        }
        // The next daemon starts before its first unlock, with the sensor (started here: the
        // security tool's daemon would have none).
        _ = try keychain.connect()
        let unlock = try CommandRunner.run(
            "security", ["unlock-keychain", "-p", "1234"], environment: keychain.environment.merging(["KEYCHAIN_HOME": keychain.home]) { _, new in new })
        #expect(unlock.status == 0, "\(unlock.stderr)")
        try script(answers: ["1234", "1234"], scans: ["match finger-1", "match finger-1"])
        #expect(read("guarded").0 == OSStatusCode.decode)
        #expect(read("downgraded").0 == OSStatusCode.decode)
        let attributes = try api.copyMatching(genericPassword(account: "guarded", ["r_Attributes": .bool(true)]))
        #expect(attributes?.dictionary?["acct"] == .string("guarded"), "the attributes are intact")
    }
}
