import FoundationEssentials
import KeychainBackupFormat
import KeychainModel
import KeychainProtocol


/// Linux additions: backups of the keychain, their restore and inspection.
enum BackupCommands {
    static let usage = """
        create --out file | restore file | inspect [--verify] file
            create   Write every item to file under a backup password (asked twice); with a
                     keychain password set, that too. WhenPasscodeSetThisDeviceOnly items are
                     never backed up; ThisDeviceOnly items restore only on this device.
            restore  Restore the backup in file into this keychain. An item that is already
                     here is replaced only by a newer one (modification date; a tie keeps it).
            inspect  Show the counts per class, protection class and access group; with
                     --verify, check the backup's integrity with its password.
        """

    static func backup(_ arguments: [String], _ session: ToolSession) -> Int32 {
        guard arguments.count >= 2 else { return ToolCommand.showUsage }
        let verb = arguments[1]
        guard let parsed = try? OptionParser("h", longOptions: ["out": true, "verify": false]).parse(arguments.dropFirst(2)) else {
            return ToolCommand.showUsage
        }
        let out = parsed.options.last { $0.name == "out" }?.value
        let verify = parsed.options.contains { $0.name == "verify" }
        guard parsed.options.allSatisfy({ ["out", "verify"].contains($0.name) }) else { return ToolCommand.showUsage }
        switch verb {
        case "create":
            guard let out, !out.isEmpty, parsed.operands.isEmpty, !verify else { return ToolCommand.showUsage }
            return create(out, session)
        case "restore":
            guard out == nil, !verify, parsed.operands.count == 1 else { return ToolCommand.showUsage }
            return restore(parsed.operands[0], session)
        case "inspect":
            guard out == nil, parsed.operands.count == 1 else { return ToolCommand.showUsage }
            return inspect(parsed.operands[0], verify: verify)
        default:
            return ToolCommand.showUsage
        }
    }

    private static func create(_ path: String, _ session: ToolSession) -> Int32 {
        guard let first = PasswordPrompt.read("backup password: "), let second = PasswordPrompt.read("retype backup password: ") else {
            return -1
        }
        guard first.isEqual(to: second) else {
            ToolOutput.error("Passwords don't match.\n")
            return OSStatusCode.authFailed.rawValue
        }
        do {
            let counts = try session.call(Service.CreateBackup(path: absolute(path), password: first), purpose: "make a backup")
            var text = "backed up \(counts.backedUp) items to \(path)\n"
            if counts.passcodeSetItems > 0 { text += "left out \(counts.passcodeSetItems) WhenPasscodeSetThisDeviceOnly items (never backed up)\n" }
            if counts.applicationPasswordItems > 0 {
                text += "left out \(counts.applicationPasswordItems) items protected by an application password\n"
            }
            if counts.unreadable > 0 { text += "left out \(counts.unreadable) items that could not be decrypted\n" }
            ToolOutput.print(text)
            return 0
        } catch {
            return ToolOutput.failure("backup create", error)
        }
    }

    private static func restore(_ path: String, _ session: ToolSession) -> Int32 {
        guard let password = PasswordPrompt.read("backup password: ") else { return -1 }
        do {
            let counts = try session.call(Service.RestoreBackup(path: absolute(path), password: password))
            var text = "restored \(counts.restored) items, replaced \(counts.replaced) older ones, kept \(counts.keptExisting) as new or newer\n"
            if counts.otherDeviceOnly > 0 {
                text += "not restored: \(counts.otherDeviceOnly) ThisDeviceOnly items made on another device\n"
            }
            if counts.otherDeviceEnrollment > 0 {
                text += "not restored: \(counts.otherDeviceEnrollment) items bound to another device's biometric enrollment\n"
            }
            ToolOutput.print(text)
            return 0
        } catch {
            return ToolOutput.failure("backup restore", error)
        }
    }

    /// Reads the archive here: the counts need no password and no daemon.
    private static func inspect(_ path: String, verify: Bool) -> Int32 {
        do {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw KeychainError(status: OSStatusCode.io, message: "cannot read \(path)")
            }
            let archive = try BackupArchive(decoding: data)
            var text = "backup: \(archive.uuid.uuidString.lowercased())\n"
            text += "created: \(archive.created.formatted(.iso8601))\n"
            text += "items: \(archive.records.count) (tombstones: \(archive.records.filter(\.tombstone).count))\n"
            text += "by class and access group:\n"
            let byGroup = Dictionary(grouping: archive.records) { "\($0.itemClass.rawValue) \($0.accessGroup)" }
            for key in byGroup.keys.sorted() { text += "    \(key)  \(byGroup[key]!.count)\n" }  // a key of the dictionary
            text += "by protection class:\n"
            let byClass = Dictionary(grouping: archive.records, by: \.protection)
            for protection in ProtectionClass.allCases {
                guard let records = byClass[protection] else { continue }
                let note = protection.isThisDeviceOnly ? " (this device only)" : ""
                text += "    \(protection.rawValue)  \(records.count)\(note)\n"
            }
            if verify {
                guard archive.kdf.memoryBytes <= BackupArchive.maximumKDFMemory else {
                    throw KeychainError.decode("the backup's password parameters are out of range")
                }
                guard let password = PasswordPrompt.read("backup password: ") else { return -1 }
                try BackupArchive.verify(data, key: BackupPasswordKeys(password: password, kdf: archive.kdf).integrityKey)
                text += "integrity: verified\n"
            } else {
                text += "integrity: not verified (--verify checks it with the password)\n"
            }
            ToolOutput.print(text)
            return 0
        } catch {
            return ToolOutput.failure("backup inspect", error)
        }
    }

    /// `path` made absolute against the working directory: the daemon has its own.
    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The counts a backup or restore answered with.
}
