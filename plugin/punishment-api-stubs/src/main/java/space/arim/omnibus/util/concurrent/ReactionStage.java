package space.arim.omnibus.util.concurrent;

import java.util.concurrent.CompletionStage;

/**
 * Omnibus' completion stage, which LibertyBans' API returns. The plugin uses it as a
 * {@code CompletionStage} only (the real one redeclares its methods with covariant returns).
 */
public interface ReactionStage<T> extends CompletionStage<T> {}
