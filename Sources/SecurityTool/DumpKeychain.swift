import FoundationEssentials
import KeychainClient
import KeychainModel
import KeychainSystem
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `dump-keychain [-d] [-o file] [keychain...]`: every generic and internet password's
/// block in the keychains named (else the search list), as `find-…-password` prints it;
/// with `-d`, each item's secret after it.
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
        let keychains: [KeychainName]
        do throws(KeychainError) {
            keychains = try session.keychains(operands)
        } catch {
            ToolOutput.report("SecKeychainCopySearchList", error)
            return 1
        }
        for keychain in keychains {
            guard !keychain.isReadOnly else { continue }  // no passwords in System Roots
            for passwordClass in [PasswordClass.generic, .internet] {
                var query: [String: KeychainValue] = [
                    QueryKey.itemClass: .string(passwordClass.code), QueryKey.matchLimit: .string(QueryKey.matchLimitAll), QueryKey.returnAttributes: .bool(true),
                ]
                if showData { query[QueryKey.returnData] = .bool(true) }
                do throws(KeychainError) {
                    let found = try session.scoped(to: keychain) { () throws(KeychainError) in try session.call(Service.CopyMatching(query)) }
                    guard case .array(let items)? = found else { continue }
                    for case .dictionary(let item) in items {
                        let data = showData ? Array(item[QueryKey.valueData]?.dataValue ?? Data()) : nil
                        out += ItemPrinter.block(item, of: passwordClass, keychainPath: keychain.path(session.paths), data: data)
                    }
                } catch where error.status == OSStatusCode.itemNotFound {
                    continue
                } catch where operands.isEmpty && keychain.isPassedOver(error) {
                    break  // a keychain of the search list that is gone
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
