/// Asks the user for the keychain's passcode and unlocks the keychain with it, with `reason`
/// shown; throws when no one can be asked or the user cancels.
public typealias SecretUnlocker = @Sendable (_ reason: String) throws -> Void
