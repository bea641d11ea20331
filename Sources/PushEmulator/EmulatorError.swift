/// A configuration or certificate the emulator cannot start with.
public enum EmulatorError: Error, CustomStringConvertible {
    case configuration(String)
    case certificate(String)

    public var description: String {
        switch self {
        case .configuration(let text): return "emulator configuration: \(text)"
        case .certificate(let text): return "emulator certificate: \(text)"
        }
    }
}
