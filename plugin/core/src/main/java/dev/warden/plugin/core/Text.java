package dev.warden.plugin.core;

/**
 * Makes a string fit a text field of the contract (§1): no NUL, no unpaired surrogate (replaced by
 * U+FFFD), at most {@code max} characters (Unicode code points). Records are clipped rather than
 * refused so that one long chat line never costs the batch it travels in.
 */
public final class Text {
    private Text() {}

    /** The clipped text, or null when {@code s} is null or nothing is left of it. */
    public static String clip(String s, int max) {
        if (s == null) {
            return null;
        }
        StringBuilder out = null;
        int count = 0;
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            int width = 1;
            String replacement = null;
            if (c == '\u0000') {
                replacement = "";
            } else if (Character.isHighSurrogate(c)) {
                if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    width = 2;
                } else {
                    replacement = "\uFFFD";
                }
            } else if (Character.isLowSurrogate(c)) {
                replacement = "\uFFFD";
            }
            boolean counts = replacement == null || !replacement.isEmpty();
            if (counts && count == max) {
                if (out == null) {
                    out = new StringBuilder(s.substring(0, i));
                }
                break;
            }
            if (replacement != null && out == null) {
                out = new StringBuilder(s.length()).append(s, 0, i);
            }
            if (out != null) {
                if (replacement != null) {
                    out.append(replacement);
                } else {
                    out.append(s, i, i + width);
                }
            }
            if (counts) {
                count++;
            }
            i += width;
        }
        String result = out == null ? s : out.toString();
        return result.isEmpty() ? null : result;
    }
}
