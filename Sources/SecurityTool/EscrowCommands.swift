import FoundationEssentials
import KeychainModel
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Linux additions: escrow keybags, which let a designated agent (an unattended backup
/// job) open class C items after a restart without the keychain password.
enum EscrowCommands {
    static let usage = """
        create --out file | unlock file | revoke file|id
            create  Make an escrow keybag of the AfterFirstUnlock class keys and write its
                    secret to file (0600) for the agent; with a keychain password set, that
                    is needed. WhenUnlocked and WhenPasscodeSet keys are never in it.
            unlock  Make AfterFirstUnlock items available with the escrow secret in file.
            revoke  Revoke the escrow keybag of file (or its id): its secret opens nothing.
        """

    /// The first word of an escrow file.
    static let fileTag = "trousseau-escrow-v1"

    static func escrow(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard arguments.count >= 2,
            let parsed = try? OptionParser("h", longOptions: ["out": true]).parse(arguments.dropFirst(2))
        else { return ToolCommand.showUsage }
        let out = parsed.options.last { $0.name == "out" }?.value
        do {
            switch (arguments[1], out, parsed.operands.count) {
            case ("create", let out?, 0):
                let escrow = try session.call(Service.CreateEscrow(), purpose: "make an escrow keybag")
                let secret = escrow.secret.withUnsafeBytes { Data($0) }.lowercaseHex
                try write("\(fileTag) \(escrow.id.lowercaseHex) \(secret)\n", to: out)
                ToolOutput.print("escrow keybag \(escrow.id.lowercaseHex) written to \(out)\n")
            case ("unlock", nil, 1):
                let (id, secret) = try read(parsed.operands[0])
                try session.call(Service.UnlockWithEscrow(id: id, secret: secret))
            case ("revoke", nil, 1):
                let operand = parsed.operands[0]
                let id = try bytes(operand).flatMap { $0.count == 16 ? $0 : nil } ?? read(operand).id
                try session.call(Service.RevokeEscrow(id: id), purpose: "revoke an escrow keybag")
            default:
                return ToolCommand.showUsage
            }
            return 0
        } catch {
            return ToolOutput.failure("escrow \(arguments[1])", error)
        }
    }

    private static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeychainError(status: OSStatusCode.io, message: "cannot create \(path)") }
        defer { close(fd) }
        guard ToolOutput.write(Array(text.utf8), to: fd) else { throw KeychainError(status: OSStatusCode.io, message: "cannot write \(path)") }
    }

    private static func read(_ path: String) throws -> (id: Data, secret: SecretBytes) {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw KeychainError(status: OSStatusCode.io, message: "cannot read \(path)")
        }
        let words = String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.count == 3, words[0] == fileTag, let id = try bytes(words[1]), id.count == 16, let secret = try bytes(words[2]) else {
            throw KeychainError.param("\(path) is not an escrow file")
        }
        return (id, SecretBytes(secret))
    }

    /// The bytes of a hex string, or nil when it is not one.
    private static func bytes(_ text: String) throws -> Data? {
        Hexadecimal.bytes(text).map { Data($0) }
    }
}
