package dev.warden.plugin.paper.enforce;

import dev.warden.plugin.core.enforce.Enforcer;
import dev.warden.plugin.core.enforce.Outcome;
import dev.warden.plugin.paper.scheduler.PlatformScheduler;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.bukkit.entity.Player;

/**
 * Kicks and messages for the action feed, on the thread that owns the player (the feed's own
 * thread waits up to {@link #WAIT_SECONDS} for the answer, never a server thread).
 */
public final class PaperEnforcer implements Enforcer {
    static final long WAIT_SECONDS = 10;
    private final PlatformScheduler scheduler;

    public PaperEnforcer(PlatformScheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    @SuppressWarnings("deprecation") // kickPlayer(String): Spigot's only form; Paper keeps it.
    public Outcome kick(UUID player, String message) {
        return run(player, p -> p.kickPlayer(message));
    }

    @Override
    public Outcome message(UUID player, String message) {
        return run(player, p -> p.sendMessage(message));
    }

    private Outcome run(UUID player, Consumer<Player> task) {
        try {
            return scheduler.withPlayer(player, task).get(WAIT_SECONDS, TimeUnit.SECONDS)
                    ? Outcome.APPLIED : Outcome.NOT_ONLINE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.FAILED;
        } catch (ExecutionException | TimeoutException e) {
            return Outcome.FAILED;
        }
    }
}
