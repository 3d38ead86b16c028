/// Command-line options as BSD getopt(3) reads them, the way macOS's `security` and each of
/// its commands do: short options cluster (`-wa alice`), an option's value is the rest of
/// its word or the next word (even one starting with `-`), the first operand or `--` ends
/// the options, and an unknown option or a missing value is reported as getopt reports it
/// (`security: illegal option -- z`) unless the specification starts with `:`.
///
/// Linux additions take long options (`--access-group G`, `--access-group=G`), which
/// getopt on macOS would reject as an illegal `-` option.
struct OptionParser {
    /// One option found, by its letter or long name, with its value when it takes one, and
    /// where that value is: the index of its word in the arguments, which it ends.
    struct Option {
        var name: String
        var value: String?
        var valueWord: Int? = nil
    }

    /// Why parsing stopped: the command answers with its usage (status 2) unless it
    /// handles the option itself (an `add-…-password -w` without a value prompts).
    enum Failure: Error {
        case unknownOption(String)
        case missingValue(String)
    }

    private let takesValue: [Character: Bool]
    private let longOptions: [String: Bool]
    private let silent: Bool
    private let valueMayBeMissing: Set<Character>

    /// - Parameters:
    ///   - specification: getopt's option string: letters, each followed by `:` when it
    ///     takes a value; a leading `:` reports nothing on standard error.
    ///   - longOptions: long option names, each mapped to whether it takes a value.
    ///   - valueMayBeMissing: options that, last without their value, are returned with
    ///     none (`add-generic-password … -w` then prompts for the password).
    init(_ specification: String, longOptions: [String: Bool] = [:], valueMayBeMissing: Set<Character> = []) {
        self.valueMayBeMissing = valueMayBeMissing
        var letters = specification[...]
        silent = letters.first == ":"
        if silent { letters = letters.dropFirst() }
        var takesValue: [Character: Bool] = [:]
        var index = letters.startIndex
        while index < letters.endIndex {
            let letter = letters[index]
            index = letters.index(after: index)
            let valued = index < letters.endIndex && letters[index] == ":"
            if valued { index = letters.index(after: index) }
            takesValue[letter] = valued
        }
        self.takesValue = takesValue
        self.longOptions = longOptions
    }

    /// Parses `arguments` (without the command's name) into options, in order, and the
    /// operands after them.
    func parse(_ arguments: ArraySlice<String>) throws(Failure) -> (options: [Option], operands: [String]) {
        var options: [Option] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let word = arguments[index]
            guard word.hasPrefix("-"), word != "-" else { break }
            index += 1
            if word == "--" { break }
            if word.hasPrefix("--"), !longOptions.isEmpty {
                let body = word.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                guard let valued = longOptions[name] else { throw report(.unknownOption(String(body))) }
                if let equals = body.firstIndex(of: "=") {
                    guard valued else { throw report(.unknownOption(String(body))) }
                    options.append(Option(name: name, value: String(body[body.index(after: equals)...]), valueWord: index - 1))
                } else if valued {
                    guard index < arguments.endIndex else { throw report(.missingValue(name)) }
                    options.append(Option(name: name, value: arguments[index], valueWord: index))
                    index += 1
                } else {
                    options.append(Option(name: name, value: nil))
                }
                continue
            }
            var letters = word.dropFirst()
            while let letter = letters.first {
                letters = letters.dropFirst()
                guard let valued = takesValue[letter] else { throw report(.unknownOption(String(letter))) }
                guard valued else {
                    options.append(Option(name: String(letter), value: nil))
                    continue
                }
                if !letters.isEmpty {
                    options.append(Option(name: String(letter), value: String(letters), valueWord: index - 1))
                } else if index < arguments.endIndex {
                    options.append(Option(name: String(letter), value: arguments[index], valueWord: index))
                    index += 1
                } else if valueMayBeMissing.contains(letter) {
                    options.append(Option(name: String(letter), value: nil))
                } else {
                    throw report(.missingValue(String(letter)))
                }
                break
            }
        }
        return (options, Array(arguments[index...]))
    }

    /// Writes getopt's message for `failure` unless the specification is silent.
    private func report(_ failure: Failure) -> Failure {
        guard !silent else { return failure }
        switch failure {
        case .unknownOption(let name) where name.count == 1:
            ToolOutput.error("security: illegal option -- \(name)\n")
        case .unknownOption(let name):
            ToolOutput.error("security: unrecognized option `--\(name)'\n")
        case .missingValue(let name) where name.count == 1:
            ToolOutput.error("security: option requires an argument -- \(name)\n")
        case .missingValue(let name):
            ToolOutput.error("security: option `--\(name)' requires an argument\n")
        }
        return failure
    }
}
