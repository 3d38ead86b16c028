import FoundationEssentials
import KeychainModel
import KeychainSystem
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `dump-keychain [-d] [-o file] [keychain...]`: every generic and internet password's
/// block, as `find-…-password` prints it; with `-d`, each item's secret after it.
enum DumpKeychain {
    static func run(_ arguments: [String], _ session: ToolSession) -> Int32 {
        var showData = false
        var outputFile: String?
        var unsupported: String?
        guard let operands = KeychainCommands.parse(arguments, "adhiro:", { option in
            switch option.name {
            case "d": showData = true
            case "o": outputFile = option.value
            case "a", "i", "r": unsupported = option.name  // ACLs and raw encrypted rows: see below
            default: return false
            }
            return true
        }) else { return ToolCommand.showUsage }
        if let unsupported {
            // Items here are guarded by access groups, not ACLs, and the daemon never hands
            // out encrypted rows.
            ToolOutput.report("dump-keychain -\(unsupported)", status: OSStatusCode.unimplemented)
            return OSStatusCode.unimplemented.rawValue
        }
        var out = ""
        if operands.isEmpty || operands.contains(where: session.names(keychain:)) {
            for passwordClass in [PasswordClass.generic, .internet] {
                var query: [String: KeychainValue] = [
                    QueryKey.itemClass: .string(passwordClass.code), QueryKey.matchLimit: .string(QueryKey.matchLimitAll), QueryKey.returnAttributes: .bool(true),
                ]
                if showData { query[QueryKey.returnData] = .bool(true) }
                do {
                    guard case .array(let items)? = try session.call(Service.CopyMatching(query)) else { continue }
                    for case .dictionary(let item) in items {
                        let data = showData ? Array(item[QueryKey.valueData]?.dataValue ?? Data()) : nil
                        out += ItemPrinter.block(item, of: passwordClass, keychainPath: session.keychainPath, data: data)
                    }
                } catch where error.status == OSStatusCode.itemNotFound {
                    continue
                } catch {
                    ToolOutput.report("SecKeychainSearchCopyNext", error)
                    return 1
                }
            }
        }
        guard let outputFile else {
            ToolOutput.print(out)
            return 0
        }
        // The dump may hold secrets: the file is the user's alone, an existing one too (open
        // keeps an existing file's mode).
        let fd = open(outputFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0, fchmod(fd, 0o600) == 0, ToolOutput.write(Array(out.utf8), to: fd) else {
            ToolOutput.report("\(outputFile): \(SystemCall.describe(errno))")
            if fd >= 0 { close(fd) }
            return 1
        }
        close(fd)
        return 0
    }
}
