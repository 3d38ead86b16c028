/// The tool's commands in macOS's order (a prefix names the first command it starts), with
/// macOS's usage text and descriptions; Trousseau's own commands come last.
enum CommandTable {
    static func command(matching typed: String) -> ToolCommand? {
        commands.first { $0.name.hasPrefix(typed) }
    }

    /// The flags the password commands add to macOS's: the access group, and a
    /// synchronizable item (`kSecAttrSynchronizable`: macOS's tool reaches no iCloud item).
    private static let accessGroupUsage = """
            --access-group  Use the access group (Trousseau; default: the caller's first)
            --synchronizable  A synchronizable item, which syncs to the user's other devices (Trousseau; not in macOS's tool)

        """

    /// The lines macOS's two add commands end their usage with.
    private static let addUsageTail = """
            -w  Specify password to be added
            -X  Specify password data to be added as a hexadecimal string
            -A  Allow any application to access this item without warning (insecure, not recommended!)
            -T  Specify an application which may access this item (multiple -T options are allowed)
            -U  Update item if it already exists (if omitted, the item cannot already exist)
        \(accessGroupUsage)
        By default, the application which creates an item is trusted to access its data without warning.
        You can remove this default access by explicitly specifying an empty app pathname: -T ""
        If no keychain is specified, the password is added to the default keychain.
        Use of the -p or -w options is insecure. Specify -w as the last option to be prompted.

        """

    /// The match flags find and delete share, for each class.
    private static let genericMatchUsage = """
            -a  Match "account" string
            -c  Match "creator" (four-character code)
            -C  Match "type" (four-character code)
            -D  Match "kind" string
            -G  Match "value" string (generic attribute)
            -j  Match "comment" string
            -l  Match "label" string
            -s  Match "service" string
        """

    private static let internetMatchUsage = """
            -a  Match "account" string
            -c  Match "creator" (four-character code)
            -C  Match "type" (four-character code)
            -d  Match "securityDomain" string
            -D  Match "kind" string
            -j  Match "comment" string
            -l  Match "label" string
            -p  Match "path" string
            -P  Match port number
            -r  Match "protocol" (four-character code)
            -s  Match "server" string
            -t  Match "authenticationType" (four-character code)
        """

    /// `default-keychain` and `login-keychain`, which differ by their word only.
    private static func keychainCommand(_ word: String) -> ToolCommand {
        ToolCommand(
            name: "\(word)-keychain",
            usage: """
                [-d user|system|common|dynamic] [-s [keychain]]
                    -d  Use the specified preference domain
                    -s  Set the \(word) keychain to the specified keychain
                With no parameters, display the \(word) keychain.
                """,
            help: "Display or set the \(word) keychain.",
            run: { KeychainListCommands.run(word == "login" ? .loginKeychain : .defaultKeychain, $0, $1) })
    }

    static let commands: [ToolCommand] = [
        ToolCommand(
            name: "help", usage: "[command ...]", help: "Show all commands, or show usage for a command.",
            run: { arguments, _ in SecurityTool.showHelp(arguments[0], Array(arguments.dropFirst())) }),
        ToolCommand(
            name: "list-keychains",
            usage: """
                [-d user|system|common|dynamic] [-s [keychain...]]
                    -d  Use the specified preference domain
                    -s  Set the search list to the specified keychains
                With no parameters, display the search list.
                """,
            help: "Display or manipulate the keychain search list.",
            run: { KeychainListCommands.run(.searchList, $0, $1) }),
        keychainCommand("default"),
        keychainCommand("login"),
        ToolCommand(
            name: "create-keychain",
            usage: """
                [-P] [-p password] [keychains...]
                    -p  Use "password" as the password for the keychains being created
                    -P  Prompt the user for a password using the SecurityAgent
                Use of the -p option is insecure
                """,
            help: "Create keychains and add them to the search list.", run: FileKeychainCommands.create,
            echo: KeychainCommands.hiding(["-p"])),
        ToolCommand(
            name: "delete-keychain", usage: "[keychains...]", help: "Delete keychains and remove them from the search list.",
            run: FileKeychainCommands.delete),
        ToolCommand(
            name: "lock-keychain", usage: "[-a | keychain]\n    -a  Lock all keychains", help: "Lock the specified keychain.",
            run: KeychainCommands.lock),
        ToolCommand(
            name: "unlock-keychain",
            usage: """
                [-u] [-p password] [keychain]
                    -p  Use "password" as the password to unlock the keychain
                    -u  Do not use the password
                Use of the -p option is insecure
                """,
            help: "Unlock the specified keychain.", run: KeychainCommands.unlock, echo: KeychainCommands.hiding(["-p"])),
        ToolCommand(
            name: "set-keychain-settings",
            usage: """
                [-lu] [-t timeout] [keychain]
                    -l  Lock keychain when the system sleeps
                    -u  Lock keychain after timeout interval
                    -t  Timeout in seconds (omitting this option specifies "no timeout")

                """,
            help: "Set settings for a keychain.", run: KeychainCommands.setSettings),
        ToolCommand(
            name: "set-keychain-password",
            usage: """
                [-o oldPassword] [-p newPassword] [keychain]
                    -o  Old keychain password (if not provided, will prompt)
                    -p  New keychain password (if not provided, will prompt)
                Use of either the -o or -p options is insecure

                """,
            help: "Set password for a keychain.", run: KeychainCommands.setPassword, echo: KeychainCommands.hiding(["-o", "-p"])),
        ToolCommand(
            name: "show-keychain-info", usage: "[keychain]", help: "Show the settings for keychain.", run: KeychainCommands.showInfo),
        ToolCommand(
            name: "keychain-migrate",
            usage: """
                --tpm [--tcti tcti] [-p password]
                    --tpm   Move the keychain's device key into the TPM 2.0, with nothing re-encrypted
                    --tcti  The TPM to use (default: $TROUSSEAU_TPM, else device:/dev/tpmrm0)
                    -p      The keychain password, when one is set (if not provided, will prompt)
                Use of the -p option is insecure

                """,
            help: "Move the keychain onto the TPM.", run: KeychainCommands.migrate, echo: KeychainCommands.hiding(["-p"])),
        ToolCommand(
            name: "dump-keychain",
            usage: """
                [-adir] [keychain...]
                    -a  Dump access control list of items
                    -d  Dump (decrypted) data of items
                    -i  Interactive access control list editing mode
                    -r  Dump the raw (encrypted) data of items
                """,
            help: "Dump the contents of one or more keychains.", run: DumpKeychain.run),
        ToolCommand(
            name: "add-generic-password",
            usage: """
                [-a account] [-s service] [-w password] [options...] [-A|-T appPath] [keychain]
                    -a  Specify account name (required)
                    -c  Specify item creator (optional four-character code)
                    -C  Specify item type (optional four-character code)
                    -D  Specify kind (default is "application password")
                    -G  Specify generic attribute (optional)
                    -j  Specify comment string (optional)
                    -l  Specify label (if omitted, service name is used as default label)
                    -s  Specify service name (required)
                    -p  Specify password to be added (legacy option, equivalent to -w)
                \(addUsageTail)
                """,
            help: "Add a generic password item.", run: { PasswordItemCommands.add(.generic, $0, $1) },
            echo: { PasswordItemCommands.hidingPasswords(.generic, $0) }),
        ToolCommand(
            name: "add-internet-password",
            usage: """
                [-a account] [-s server] [-w password] [options...] [-A|-T appPath] [keychain]
                    -a  Specify account name (required)
                    -c  Specify item creator (optional four-character code)
                    -C  Specify item type (optional four-character code)
                    -d  Specify security domain string (optional)
                    -D  Specify kind (default is "Internet password")
                    -j  Specify comment string (optional)
                    -l  Specify label (if omitted, server name is used as default label)
                    -p  Specify path string (optional)
                    -P  Specify port number (optional)
                    -r  Specify protocol (optional four-character SecProtocolType, e.g. "http", "ftp ")
                    -s  Specify server name (required)
                    -t  Specify authentication type (as a four-character SecAuthenticationType, default is "dflt")
                \(addUsageTail)
                """,
            help: "Add an internet password item.", run: { PasswordItemCommands.add(.internet, $0, $1) },
            echo: { PasswordItemCommands.hidingPasswords(.internet, $0) }),
        ToolCommand(
            name: "add-certificates",
            usage: """
                [-h] [-k keychain] file...
                If no keychain is specified, the certificates are added to the default keychain.
                """,
            help: "Add certificates to a keychain.", run: CertificateCommands.addCertificates),
        ToolCommand(
            name: "find-generic-password",
            usage: """
                [-a account] [-s service] [options...] [-g] [keychain...]
                \(genericMatchUsage)
                    -g  Display the password for the item found
                    -w  Display only the password on stdout
                \(accessGroupUsage)If no keychains are specified to search, the default search list is used.
                """,
            help: "Find a generic password item.", run: { PasswordItemCommands.find(.generic, $0, $1) }),
        ToolCommand(
            name: "delete-generic-password",
            usage: """
                [-a account] [-s service] [options...] [keychain...]
                \(genericMatchUsage)
                \(accessGroupUsage)If no keychains are specified to search, the default search list is used.
                """,
            help: "Delete a generic password item.", run: { PasswordItemCommands.delete(.generic, $0, $1) }),
        ToolCommand(
            name: "find-internet-password",
            usage: """
                [-a account] [-s server] [options...] [-g] [keychain...]
                \(internetMatchUsage)
                    -g  Display the password for the item found
                    -w  Display only the password on stdout
                \(accessGroupUsage)If no keychains are specified to search, the default search list is used.
                """,
            help: "Find an internet password item.", run: { PasswordItemCommands.find(.internet, $0, $1) }),
        ToolCommand(
            name: "delete-internet-password",
            usage: """
                [-a account] [-s server] [options...] [keychain...]
                \(internetMatchUsage)
                \(accessGroupUsage)If no keychains are specified to search, the default search list is used.
                """,
            help: "Delete an internet password item.", run: { PasswordItemCommands.delete(.internet, $0, $1) }),
        ToolCommand(
            name: "find-certificate",
            usage: """
                [-h] [-a] [-c name] [-e emailAddress] [-m] [-p] [-Z] [keychain...]
                    -a  Find all matching certificates, not just the first one
                    -c  Match on "name" when searching (optional)
                    -e  Match on "emailAddress" when searching (optional)
                    -m  Show the email addresses in the certificate
                    -p  Output certificate in pem format
                    -Z  Print SHA-256 (and SHA-1) hash of the certificate
                If no keychains are specified to search, the default search list is used.
                """,
            help: "Find a certificate item.", run: CertificateCommands.findCertificate),
        ToolCommand(
            name: "find-identity",
            usage: """
                [-h] [-p policy] [-s string] [-v] [keychain...]
                    -p  Specify policy to evaluate (multiple -p options are allowed)
                        Supported policies: basic, ssl-client, ssl-server, smime, eap,
                        ipsec, ichat, codesigning, sys-default, sys-kerberos-kdc, macappstore, appleID
                    -s  Specify optional policy-specific string (e.g. DNS hostname for SSL,
                        or RFC822 email address for S/MIME)
                    -v  Show valid identities only (default is to show all identities)
                If no keychains are specified to search, the default search list is used.
                """,
            help: "Find an identity (certificate + private key).", run: CertificateCommands.findIdentity),
        ToolCommand(
            name: "delete-certificate",
            usage: """
                [-h] [-c name] [-Z hash] [-t] [keychain...]
                    -c  Specify certificate to delete by its common name
                    -Z  Specify certificate to delete by its SHA-256 (or SHA-1) hash value
                    -t  Also delete user trust settings for this certificate
                The certificate to be deleted must be uniquely specified either by a
                string found in its common name, or by its SHA-256 (or SHA-1) hash.
                If no keychains are specified to search, the default search list is used.
                """,
            help: "Delete a certificate from a keychain.", run: CertificateCommands.deleteCertificate),
        ToolCommand(
            name: "delete-identity",
            usage: """
                [-h] [-c name] [-Z hash] [-t] [keychain...]
                    -c  Specify certificate to delete by its common name
                    -Z  Specify certificate to delete by its SHA-256 (or SHA-1) hash value
                    -t  Also delete user trust settings for this identity certificate
                The identity to be deleted must be uniquely specified either by a
                string found in its common name, or by its SHA-256 (or SHA-1) hash.
                If no keychains are specified to search, the default search list is used.
                """,
            help: "Delete an identity (certificate + private key) from a keychain.", run: CertificateCommands.deleteIdentity),
        ToolCommand(
            name: "export",
            usage: """
                [-k keychain] [-t type] [-f format] [-w] [-p] [-P passphrase] [-o outfile]
                    -k  keychain to export items from
                    -t  Type = certs|allKeys|pubKeys|privKeys|identities|all  (Default: all)
                    -f  Format = openssl|openssh1|openssh2|bsafe|pkcs7|pkcs8|pkcs12|pemseq|x509
                        ...default format is pemseq for aggregate, openssl for single
                    -w  Private keys are wrapped
                    -p  PEM encode the output
                    -P  Specify wrapping passphrase immediately (default is secure passphrase via GUI)
                    -o  Specify output file (default is stdout)
                Use of the -P option is insecure
                """,
            help: "Export items from a keychain.", run: ImportExportCommands.exportItems, echo: ImportExportCommands.hidingPassphrase),
        ToolCommand(
            name: "import",
            usage: """
                inputfile [-k keychain] [-t type] [-f format] [-w] [-P passphrase] [options...]
                    -k  Target keychain to import into
                    -t  Type = pub|priv|session|cert|agg
                    -f  Format = openssl|openssh1|openssh2|bsafe|raw|pkcs7|pkcs8|pkcs12|netscape|pemseq
                    -w  Specify that private keys are wrapped and must be unwrapped on import
                    -x  Specify that private keys are non-extractable after being imported
                    -P  Specify wrapping passphrase immediately (default is secure passphrase via GUI)
                    -a  Specify name and value of extended attribute (can be used multiple times)
                    -A  Allow any application to access the imported key without warning (insecure, not recommended!)
                    -T  Specify an application which may access the imported key (multiple -T options are allowed)
                Use of the -P option is insecure
                """,
            help: "Import items into a keychain.", run: ImportExportCommands.importItems, echo: ImportExportCommands.hidingPassphrase),
        ToolCommand(
            name: "set-key-partition-list",
            usage: """
                [options...] [keychain]
                    -a  Match "application label" string
                    -c  Match "creator" (four-character code)
                    -d  Match keys that can decrypt
                    -D  Match "description" string
                    -e  Match keys that can encrypt
                    -j  Match "comment" string
                    -l  Match "label" string
                    -r  Match keys that can derive
                    -s  Match keys that can sign
                    -t  Type of key to match ("public", "private", "symmetric")
                    -u  Match keys that can unwrap
                    -v  Match keys that can verify
                    -w  Match keys that can wrap
                    -S  Comma-separated list of allowed partition IDs
                    -k  password for keychain (required)
                If no keychains are specified to search, the default search list is used.
                """,
            help: "Set the partition list of a key.", run: FileKeychainCommands.setPartitionList,
            echo: KeychainCommands.hiding(["-k"])),
        ToolCommand(
            name: "add-trusted-cert",
            usage: """
                [-d] [-r resultType] [-p policy] [-a appPath] [-s policyString] [-e allowedError] [-u keyUsage] [-k keychain] [-i settingsFileIn] [-o settingsFileOut] [certFile]
                    -d                  Add to admin cert store; default is user
                    -r resultType       resultType = trustRoot|trustAsRoot|deny|unspecified;
                                              default is trustRoot
                    -p policy           Specify policy constraint (ssl, smime, codeSign, IPSec, iChat,
                                              basic, swUpdate, pkgSign, pkinitClient, pkinitServer, eap)
                    -a appPath          Specify application constraint
                    -s policyString     Specify policy-specific string
                    -e allowedError     Specify allowed error (certExpired, hostnameMismatch) or integer
                    -u keyUsage         Specify key usage, an integer
                    -k keychain         Specify keychain to which cert is added
                    -i settingsFileIn   Input trust settings file; default is user domain
                    -o settingsFileOut  Output trust settings file; default is user domain
                    certFile            Certificate(s)
                """,
            help: "Add trusted certificate(s).", run: TrustSettingsCommands.add),
        ToolCommand(
            name: "remove-trusted-cert",
            usage: """
                [-d] certFile
                    -d                  Remove from admin cert store (default is user)
                    certFile            Certificate(s)
                """,
            help: "Remove trusted certificate(s).", run: TrustSettingsCommands.remove),
        ToolCommand(
            name: "dump-trust-settings",
            usage: """
                [-s] [-d]
                    -s                  Display trusted system certs (default is user)
                    -d                  Display trusted admin certs (default is user)

                """,
            help: "Display contents of trust settings.", run: TrustSettingsCommands.dump),
        ToolCommand(
            name: "verify-cert",
            usage: """
                [options...] [url]
                    -c certFile         Certificate to verify. Can be specified multiple times, leaf first.
                    -r rootCertFile     Root Certificate. Can be specified multiple times.
                    -p policy           Verify Policy (basic, ssl, smime, codeSign, IPSec, swUpdate, pkgSign,
                                        eap, appleID, macappstore, timestamping); default is basic.
                    -C                  Set client policy to true. Default is server policy. (ssl, IPSec, eap)
                    -d date             Set date and time to use when verifying certificate,
                                        provided in the form of YYYY-MM-DD-hh:mm:ss (time optional) in GMT.
                                        e.g: 2016-04-25-15:59:59 for April 25, 2016 at 3:59:59 pm in GMT
                    -n name             Name to be verified. (ssl, IPSec, smime)
                    -L                  Local certificates only (do not try to fetch missing CA certs from net).
                    -q                  Quiet.
                Trousseau checks the basic, ssl and codeSign policies; it never fetches certificates.
                """,
            help: "Verify certificate(s).", run: CertificateCommands.verifyCert),
        ToolCommand(
            name: "create-developer-identity", usage: CodeSigningCommands.createDeveloperIdentityUsage,
            help: "Create a developer identity (signing key and certificate) for a team.",
            run: CodeSigningCommands.createDeveloperIdentity),
        ToolCommand(
            name: "codesign", usage: CodeSigningCommands.codesignUsage,
            help: "Sign an executable with a developer identity and entitlements, or display its signature.",
            run: CodeSigningCommands.codesign),
        ToolCommand(
            name: "backup", usage: BackupCommands.usage,
            help: "Create, restore or inspect a backup of the keychain.", run: BackupCommands.backup),
        ToolCommand(
            name: "escrow", usage: EscrowCommands.usage,
            help: "Create, use or revoke an escrow keybag for an unattended agent.", run: EscrowCommands.escrow),
        ToolCommand(
            name: "sync", usage: SyncCommands.usage,
            help: "Sync synchronizable items with the user's other devices.", run: SyncCommands.sync),
        ToolCommand(
            name: "profiles", usage: ProfileCommands.usage,
            help: "Install, list, show or remove configuration profiles.", run: ProfileCommands.profiles),
        ToolCommand(
            name: "import-keyring", usage: KeyringCommands.usage,
            help: "Import the items of a gnome-keyring keyring file.", run: KeyringCommands.importKeyring),
    ]
}
