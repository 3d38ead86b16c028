import ArgumentParser

/// `security`: the macOS keychain tool's commands, over Trousseau's keychain.
@main
struct SecurityTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "security",
        abstract: "Command line interface to the keychain.",
        subcommands: [
            AddGenericPassword.self, FindGenericPassword.self, DeleteGenericPassword.self,
            UnlockKeychain.self, LockKeychain.self, SetKeychainPassword.self, SetKeychainSettings.self,
            ShowKeychainInfo.self, CreateDeveloperIdentity.self, CodeSign.self,
        ]
    )
}
