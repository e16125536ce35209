package space.arim.libertybans.api.formatter;

import space.arim.libertybans.api.scope.ServerScope;

public interface PunishmentFormatter {
    String formatScope(ServerScope scope);
}
