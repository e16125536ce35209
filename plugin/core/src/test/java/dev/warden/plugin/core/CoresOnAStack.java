package dev.warden.plugin.core;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the ITs that run plugin cores against a real stack share: the stack's process
 * ({@link ContractIT#launchStack()}), the cores started (each stopped after the test) and their
 * configuration.
 */
abstract class CoresOnAStack {
    static final String BASE = ContractIT.BASE;
    static final String ADMIN = ContractIT.ADMIN;

    @TempDir
    Path root;

    Process stack;
    final List<WardenCore> cores = new ArrayList<>();
    final Logger logger;

    CoresOnAStack(String loggerName) {
        logger = Logger.getLogger(loggerName);
    }

    @AfterEach
    void stop() throws Exception {
        cores.forEach(c -> c.shutdown(0));
        if (stack != null) {
            stack.destroy();
            stack.waitFor();
        }
    }

    void startStack() throws Exception {
        stack = ContractIT.launchStack();
    }

    /** A core's settings: one-second sync, every capture on, its folder named after the server. */
    static WardenConfig config(String folder, String pluginKey) {
        WardenConfig d = WardenConfig.defaults(BASE, pluginKey);
        return new WardenConfig(BASE, pluginKey, 1, folder, 10_000, 64, 8, 1, 5, 2,
                true, true, true, true, true, true, "global", d.redactCommands(), List.of());
    }
}
