package idpbench.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.security.oauth2.server.authorization.client.RegisteredClient;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClientRepository;

/**
 * The JDBC client repository with its lookups by id served from memory
 * after the first read. JdbcOAuth2AuthorizationService and
 * JdbcOAuth2AuthorizationConsentService call findById from inside their row
 * mappers, while their own query still holds a pooled connection: with as
 * many concurrent token lookups as the pool has connections, every one waits
 * for a second connection and none comes until the pool's timeout
 * (spring-attic/spring-authorization-server#1257, open; seen here as a
 * stall of userinfo at 32 connections with a pool of 25). Lookups by
 * client_id, which client authentication makes on every request, still read
 * the database; save goes to it and drops the cached entry.
 */
final class CachingRegisteredClientRepository implements RegisteredClientRepository {

	private final RegisteredClientRepository delegate;

	private final Map<String, RegisteredClient> byId = new ConcurrentHashMap<>();

	CachingRegisteredClientRepository(RegisteredClientRepository delegate) {
		this.delegate = delegate;
	}

	@Override
	public void save(RegisteredClient registeredClient) {
		this.delegate.save(registeredClient);
		this.byId.remove(registeredClient.getId());
	}

	@Override
	public RegisteredClient findById(String id) {
		RegisteredClient client = this.byId.get(id);
		if (client != null) {
			return client;
		}
		client = this.delegate.findById(id);
		if (client != null) {
			this.byId.put(id, client);
		}
		return client;
	}

	@Override
	public RegisteredClient findByClientId(String clientId) {
		return this.delegate.findByClientId(clientId);
	}

}
